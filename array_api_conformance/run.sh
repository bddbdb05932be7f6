#!/usr/bin/env bash
# Run the official Array API test suite (data-apis/array-api-tests) against clnp.
#
# Usage:
#   array_api_conformance/run.sh [--core | --full] [pytest args...]
#
#   --core   expands to the "core" file subset (see CORE_FILES below / README.md)
#   --full   expands to the whole suite directory (array_api_tests/)
#   --list-core / --list-full   print the file list of a preset and exit
#   -h, --help                  print this help and exit
#   (no preset and no test path given: same as --full, i.e. array_api_tests/; the
#    suite's own meta_tests/ are never collected unless you name them)
#
# All other arguments go to pytest unchanged; test paths are relative to the suite
# checkout, e.g. array_api_tests/test_creation_functions.py or
# 'array_api_tests/test_special_cases.py::test_unary'. Relative paths given to
# --json-report-file / --xfails-file / --skips-file / --junitxml are made
# absolute against the directory you call run.sh from.
#
# Environment:
#   ARRAY_API_TESTS_DIR     suite checkout (default /work/conformance-src/array-api-tests)
#   ARRAY_API_TESTS_MODULE  namespace under test (default clnp; e.g. array_api_strict)
#   ARRAY_API_TESTS_VERSION, ARRAY_API_TESTS_SKIP_DTYPES, ARRAY_API_TESTS_XFAIL_MARK
#                           passed through to the suite (see README.md)
#   PYTHON                  interpreter (default python)
#   CLNP_CONFORMANCE_RANDOM_SEED   seed for the per-test random.seed() (default 0)
#   CLNP_CONFORMANCE_HYPOTHESIS_DB=1   keep Hypothesis' example database (off by default)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
CALLER_PWD="$PWD"

ARRAY_API_TESTS_DIR="${ARRAY_API_TESTS_DIR:-/work/conformance-src/array-api-tests}"
export ARRAY_API_TESTS_MODULE="${ARRAY_API_TESTS_MODULE:-clnp}"
PYTHON="${PYTHON:-python}"
XFAILS_FILE="$SCRIPT_DIR/xfails.txt"

# The "core" subset: array object (incl. __getitem__/__setitem__ indexing),
# creation, data types, elementwise/operators, special cases, inspection,
# indexing functions (take/take_along_axis), manipulation, statistical,
# has_names, signatures.
CORE_FILES=(
  array_api_tests/test_array_object.py
  array_api_tests/test_creation_functions.py
  array_api_tests/test_data_type_functions.py
  array_api_tests/test_operators_and_elementwise_functions.py
  array_api_tests/test_special_cases.py
  array_api_tests/test_inspection_functions.py
  array_api_tests/test_indexing_functions.py
  array_api_tests/test_manipulation_functions.py
  array_api_tests/test_statistical_functions.py
  array_api_tests/test_has_names.py
  array_api_tests/test_signatures.py
)
# The full suite: every array_api_tests/test_*.py (adds constants, dlpack, fft,
# linalg, searching, set, sorting, utility on top of core).
FULL_FILES=(
  array_api_tests/
)

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

die() { echo "run.sh: error: $*" >&2; exit 2; }

missing_checkout() {
  cat >&2 <<MSG
run.sh: error: $1
The Array API test suite checkout is expected at ARRAY_API_TESTS_DIR=$ARRAY_API_TESTS_DIR
(with the spec repo as its array-api/ folder). To create it (see array_api_conformance/README.md):

  # in an agent session: fetch github:data-apis/array-api-tests and github:data-apis/array-api,
  # which gives bare git dirs under /work/.mirror/; otherwise clone from GitHub instead.
  mkdir -p /work/conformance-src && cd /work/conformance-src
  git clone /work/.mirror/data-apis+array-api-tests/repo array-api-tests   # or https://github.com/data-apis/array-api-tests
  git clone /work/.mirror/data-apis+array-api/repo array-api-spec          # or https://github.com/data-apis/array-api
  git -C array-api-tests checkout 55fcc60179efa2680ddd6cd926ddf17b83530e2b
  git -C array-api-spec checkout "\$(git -C array-api-tests ls-tree HEAD array-api | awk '{print \$3}')"  # 5f847a38...
  rmdir array-api-tests/array-api 2>/dev/null   # empty submodule dir
  git -C array-api-spec worktree add --detach "\$PWD/array-api-tests/array-api" HEAD   # (a symlink also works)
  pip install pytest pytest-json-report 'hypothesis>=6.151' 'ndindex>=1.8'
MSG
  exit 2
}

# --- parse our own options, pass the rest through ------------------------------
args=()
abs_next=""
for a in "$@"; do
  if [[ -n $abs_next ]]; then
    [[ "$a" == /* ]] || a="$CALLER_PWD/$a"
    args+=("$abs_next=$a"); abs_next=""; continue
  fi
  case "$a" in
    -h|--help) usage; exit 0 ;;
    --core) args+=("${CORE_FILES[@]}") ;;
    --full) args+=("${FULL_FILES[@]}") ;;
    --list-core) printf '%s\n' "${CORE_FILES[@]}"; exit 0 ;;
    --list-full) printf '%s\n' "${FULL_FILES[@]}"; exit 0 ;;
    --json-report-file=*|--xfails-file=*|--skips-file=*|--junitxml=*|--junit-xml=*)
      opt="${a%%=*}"; val="${a#*=}"
      [[ "$val" == /* ]] || val="$CALLER_PWD/$val"
      args+=("$opt=$val") ;;
    --json-report-file|--xfails-file|--skips-file|--junitxml|--junit-xml)
      abs_next="$a" ;;   # joined as --opt=/abs/path (see the rootdir note below)
    *) args+=("$a") ;;
  esac
done

# No test path given (nothing naming array_api_tests/, meta_tests/ or a .py file)?
# Default to the full suite directory rather than letting pytest also collect meta_tests/.
have_path=0
for a in ${args[@]+"${args[@]}"}; do
  case "$a" in array_api_tests*|meta_tests*|*.py|*.py::*|*.py\[*) have_path=1 ;; esac
done
[[ $have_path == 1 ]] || args+=("${FULL_FILES[@]}")

# --- sanity checks ---------------------------------------------------------------
[[ -d "$ARRAY_API_TESTS_DIR" ]] || missing_checkout "directory $ARRAY_API_TESTS_DIR does not exist."
[[ -f "$ARRAY_API_TESTS_DIR/conftest.py" && -d "$ARRAY_API_TESTS_DIR/array_api_tests" ]] \
  || missing_checkout "$ARRAY_API_TESTS_DIR does not look like an array-api-tests checkout (no conftest.py / array_api_tests/)."
[[ -d "$ARRAY_API_TESTS_DIR/array-api/spec" && -d "$ARRAY_API_TESTS_DIR/array-api/src/array_api_stubs" ]] \
  || missing_checkout "the spec repo is missing: $ARRAY_API_TESTS_DIR/array-api/{spec,src/array_api_stubs} not found."
[[ -f "$XFAILS_FILE" ]] || die "xfails file $XFAILS_FILE is missing."
"$PYTHON" - <<'PY' || die "missing Python requirements; run: pip install pytest pytest-json-report 'hypothesis>=6.151' 'ndindex>=1.8'"
import importlib.util, sys
missing = [m for m in ("pytest", "pytest_jsonreport", "hypothesis", "ndindex")
           if importlib.util.find_spec(m) is None]
if missing:
    print("run.sh: missing Python modules: " + ", ".join(missing), file=sys.stderr)
    sys.exit(1)
PY

export PYTHONPATH="$REPO_ROOT${PYTHONPATH:+:$PYTHONPATH}"

[[ -z $abs_next ]] || die "option $abs_next needs a value."
# --json-report-file alone does nothing in pytest-json-report; switch the report on.
want_json=0; have_json=0
for a in ${args[@]+"${args[@]}"}; do
  case "$a" in --json-report) have_json=1 ;; --json-report-file=*) want_json=1 ;; esac
done
[[ $want_json == 0 || $have_json == 1 ]] || args+=(--json-report)

cd "$ARRAY_API_TESTS_DIR"
# Pin rootdir/config to the suite checkout: pytest decides the rootdir before the
# suite's conftest registers --xfails-file etc., so a bare path value such as
# "--xfails-file /work/main/..." would be taken as a test path and make pytest pick
# /work/main/pyproject.toml (node ids then lose their array_api_tests/ prefix and
# xfails stop matching). Hence also the --opt=value forms.
set -x
exec "$PYTHON" -m pytest \
  --rootdir="$ARRAY_API_TESTS_DIR" -c "$ARRAY_API_TESTS_DIR/pytest.ini" \
  --max-examples 100 --disable-deadline --hypothesis-seed 0 \
  -p array_api_conformance.seed_random \
  --xfails-file="$XFAILS_FILE" \
  "${args[@]}"
