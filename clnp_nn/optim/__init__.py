"""``clnp_nn.optim``: optimizers, gradient transformations and schedules with optax's names,
defaults and numerics (docs/nn.md, "Optimizers").

An optimizer is a :class:`GradientTransformation` ``(init, update)``; its state is a pytree of
clnp arrays, so ``clnp_grad.jit`` compiles a whole training step.
"""
from ._alias import adagrad, adam, adamw, lamb, rmsprop, sgd
from ._base import (EmptyState, GradientTransformation, Schedule, apply_updates, chain,
                    global_norm, identity, set_to_zero)
from ._schedules import (constant_schedule, cosine_decay_schedule, exponential_decay,
                         join_schedules, linear_schedule, polynomial_schedule,
                         warmup_cosine_decay_schedule)
from ._clipping import clip, clip_by_global_norm
from ._masking import MaskedNode, MaskedState, masked
from ._transforms import (ScaleByAdamState, ScaleByRmsState, ScaleByRmsWithCountState,
                          ScaleByRssState, ScaleByRStdDevState, ScaleByRStdDevWithCountState,
                          ScaleByScheduleState, TraceState, WeightDecaySchedule,
                          add_decayed_weights, scale, scale_by_adam, scale_by_learning_rate,
                          scale_by_rms, scale_by_rss, scale_by_schedule, scale_by_stddev,
                          scale_by_trust_ratio, trace)

__all__ = ["GradientTransformation", "EmptyState", "Schedule", "identity", "set_to_zero",
           "chain", "apply_updates", "global_norm",
           "sgd", "adam", "adamw", "rmsprop", "adagrad", "lamb",
           "scale", "scale_by_schedule", "scale_by_learning_rate", "trace", "scale_by_adam",
           "scale_by_rms", "scale_by_stddev", "scale_by_rss", "scale_by_trust_ratio",
           "add_decayed_weights", "clip", "clip_by_global_norm", "masked",
           "TraceState", "ScaleByAdamState", "ScaleByRmsState", "ScaleByRmsWithCountState",
           "ScaleByRStdDevState", "ScaleByRStdDevWithCountState", "ScaleByRssState",
           "ScaleByScheduleState", "WeightDecaySchedule", "MaskedState", "MaskedNode",
           "constant_schedule", "polynomial_schedule", "linear_schedule", "exponential_decay",
           "cosine_decay_schedule", "warmup_cosine_decay_schedule", "join_schedules"]
