"""What a store's database can do, for callers to branch on instead of on the backend's class."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StoreCapabilities:
    # The database searches identity keys itself (pgvector); otherwise the store reads the
    # stored float32 keys and searches them exactly in numpy (store/vectors.py).
    native_vector_search: bool
    # Searches go through an approximate index (HNSW): results may differ from exact search,
    # and bulk loads are faster with the index dropped and built once afterwards.
    vector_index: bool
    # Several processes or hosts commit writes at the same time (row locks, MVCC). False:
    # writers take turns on one database lock, waiting up to the busy timeout.
    concurrent_writers: bool
    # copy_rows streams rows through the database's bulk-load path (COPY) rather than INSERTs.
    bulk_copy: bool


SQLITE = StoreCapabilities(native_vector_search=False, vector_index=False, concurrent_writers=False, bulk_copy=False)
POSTGRES = StoreCapabilities(native_vector_search=True, vector_index=True, concurrent_writers=True, bulk_copy=True)
