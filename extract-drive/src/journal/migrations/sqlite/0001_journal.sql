-- Format 1: a run's header, documents, replies, outcomes, failures, message
-- batches, resends and reviews. `at` orders the events of a document across
-- tables (one writer at a time, so a counter).
CREATE TABLE run (
    key TEXT PRIMARY KEY,      -- 'tool', 'schema', 'format'
    value TEXT NOT NULL
);
CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    content TEXT NOT NULL,     -- digest of its content, the tool and the instructions
    state TEXT NOT NULL        -- 'pending', 'valid', 'escalated', 'failed'
);
CREATE TABLE replies (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    prompt TEXT NOT NULL,      -- digest of the correction it answered ('' on a first attempt)
    batch TEXT,
    reply TEXT NOT NULL,       -- the Reply as JSON
    done INTEGER NOT NULL      -- whether it ended the document's run
);
CREATE INDEX replies_by_document ON replies (document, at);
CREATE TABLE outcomes (
    document TEXT PRIMARY KEY,
    content TEXT NOT NULL,
    status TEXT NOT NULL,      -- 'ok', 'escalated'
    packet TEXT NOT NULL,      -- the outcome packet as JSON
    attempts INTEGER NOT NULL,
    usage TEXT NOT NULL,       -- Usage as JSON
    facts TEXT NOT NULL,       -- what the run's statistics count of it, as JSON
    reviewed INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE failures (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    batch TEXT,
    error TEXT NOT NULL
);
CREATE TABLE batches (
    intent INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,  -- unix seconds, committed before the create call
    requests INTEGER NOT NULL,
    documents TEXT NOT NULL,      -- [[id, attempt, content], ...] as JSON
    id TEXT UNIQUE,               -- the API's batch id, once it answered
    collected INTEGER NOT NULL DEFAULT 0,
    abandoned INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE resends (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    batch TEXT NOT NULL,
    reason TEXT NOT NULL,
    counted INTEGER NOT NULL
);
CREATE TABLE reviews (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    fix TEXT NOT NULL
);
