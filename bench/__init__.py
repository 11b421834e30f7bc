"""Benchmarks (not tests): see README.md."""
