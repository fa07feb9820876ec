"""Benchmarks, run by hand: `python -m benchmarks NAME [args]`. They print figures."""
