"""attnlab: a reproducible pipeline for the chapter that derives self-attention from the plain average."""

__version__ = "0.1.0"
