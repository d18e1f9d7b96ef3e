-- egomem memory store, schema version 1. Portable SQL (SQLite and PostgreSQL).
CREATE TABLE users (
    id          TEXT PRIMARY KEY,
    name        TEXT,
    placeholder INTEGER NOT NULL DEFAULT 0,
    created_at  DOUBLE PRECISION NOT NULL,
    last_seen   DOUBLE PRECISION
);
CREATE INDEX users_name ON users (name);

CREATE TABLE identity_keys (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    modality    TEXT NOT NULL CHECK (modality IN ('face', 'voice')),
    model       TEXT NOT NULL,
    dim         INTEGER NOT NULL CHECK (dim > 0),
    vector      BLOB NOT NULL,
    condition   TEXT NOT NULL DEFAULT '',
    created_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX identity_keys_user ON identity_keys (user_id, modality);

CREATE TABLE episodes (
    id                   TEXT PRIMARY KEY,
    start_t              DOUBLE PRECISION NOT NULL,
    end_t                DOUBLE PRECISION NOT NULL,
    user_transcript      TEXT NOT NULL DEFAULT '',
    assistant_transcript TEXT NOT NULL DEFAULT '',
    summary              TEXT NOT NULL DEFAULT '',
    status               TEXT NOT NULL DEFAULT 'done',
    created_at           DOUBLE PRECISION NOT NULL
);

CREATE TABLE episode_participants (
    episode_id TEXT NOT NULL REFERENCES episodes (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (episode_id, user_id)
);
CREATE INDEX episode_participants_user ON episode_participants (user_id);

CREATE TABLE facts (
    id             TEXT PRIMARY KEY,
    user_id        TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind           TEXT NOT NULL CHECK (kind IN ('fact', 'preference', 'summary', 'persona')),
    text           TEXT NOT NULL,
    confidence     DOUBLE PRECISION NOT NULL,
    source_episode TEXT REFERENCES episodes (id) ON DELETE SET NULL,
    source_text    TEXT,
    created_at     DOUBLE PRECISION NOT NULL,
    valid_from     DOUBLE PRECISION NOT NULL,
    valid_to       DOUBLE PRECISION,
    superseded_by  TEXT,
    importance     DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    use_count      INTEGER NOT NULL DEFAULT 0,
    last_used      DOUBLE PRECISION
);
CREATE INDEX facts_user ON facts (user_id, valid_to);

CREATE TABLE relations (
    id             TEXT PRIMARY KEY,
    subject_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    relation       TEXT NOT NULL,
    object_id      TEXT REFERENCES users (id) ON DELETE CASCADE,
    object_name    TEXT,
    source_episode TEXT REFERENCES episodes (id) ON DELETE SET NULL,
    created_at     DOUBLE PRECISION NOT NULL,
    valid_from     DOUBLE PRECISION NOT NULL,
    valid_to       DOUBLE PRECISION,
    CHECK (object_id IS NOT NULL OR object_name IS NOT NULL)
);
CREATE INDEX relations_subject ON relations (subject_id);
CREATE INDEX relations_object ON relations (object_id);

-- Append-only log of every memory operation. user_id / other_user_id name the
-- people whose data a row holds, so that deleting a person purges their rows.
CREATE TABLE history (
    id            INTEGER PRIMARY KEY,
    at            DOUBLE PRECISION NOT NULL,
    op            TEXT NOT NULL CHECK (op IN ('ADD', 'UPDATE', 'DELETE', 'NOOP')),
    entity        TEXT NOT NULL,
    entity_id     TEXT NOT NULL,
    user_id       TEXT,
    other_user_id TEXT,
    before_json   TEXT,
    after_json    TEXT,
    cause         TEXT NOT NULL DEFAULT ''
);
CREATE INDEX history_user ON history (user_id);
CREATE INDEX history_other_user ON history (other_user_id);
