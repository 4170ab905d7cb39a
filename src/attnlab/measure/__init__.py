"""Measurements that are not training runs."""
