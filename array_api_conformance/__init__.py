"""Runner glue for the official Array API test suite (data-apis/array-api-tests).

Nothing here is imported by clnp; see README.md in this folder.
"""
