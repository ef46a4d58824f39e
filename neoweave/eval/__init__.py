"""Evaluation: datasets, metrics, runner and reports that compare strategies side by side."""
