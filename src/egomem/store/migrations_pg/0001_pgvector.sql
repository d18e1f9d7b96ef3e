-- PostgreSQL-only additions to schema version 1 (run after the translated 0001_initial.sql).
-- Identity keys keep their portable float32 BYTEA (`vector`, what every backend reads back
-- bit-exact) and gain a pgvector copy (`embedding`) that the database can search.
-- The column has no fixed dimension (keys of several encoders share the table), so each
-- known encoder gets a partial HNSW index over its own fixed-dimension cast; the query in
-- store/postgres.py repeats the cast and the predicate so the planner can use the index.
-- m 32 / ef_construction 128 rather than pgvector's 16 / 64: on a calibration set of 50k
-- synthetic keys the nearest key was found for 98% of queries instead of 83% (build 3.4x slower).
ALTER TABLE identity_keys ADD COLUMN embedding vector;
CREATE INDEX identity_keys_face_hnsw ON identity_keys
    USING hnsw ((embedding::vector(128)) vector_l2_ops) WITH (m = 32, ef_construction = 128)
    WHERE model = 'dlib_resnet_v1' AND modality = 'face';
CREATE INDEX identity_keys_voice_hnsw ON identity_keys
    USING hnsw ((embedding::vector(256)) vector_cosine_ops) WITH (m = 32, ef_construction = 128)
    WHERE model = 'resemblyzer' AND modality = 'voice';
-- add_key and nearest_keys look up the dimension of a model's keys; without this index that
-- is a scan of every key (about 100 ms at 100k keys). PostgreSQL-only until a shared migration adds it.
CREATE INDEX identity_keys_model ON identity_keys (model, modality, dim);
