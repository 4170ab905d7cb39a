"""Measurements that are not training: each module is a CLI writing raw results under
results/<profile>/measure/<id>/, which the table builders turn into tables."""
