-- The journal's first schema: runs by name, their documents (with leases),
-- replies, outcomes, failures, message batches, resends, reviews and
-- rejections. `extract_events` orders the events of a document across tables.
CREATE TABLE extract_runs (
    name TEXT PRIMARY KEY,
    tool TEXT NOT NULL,
    schema TEXT NOT NULL,            -- digest of the tool's schema
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    paused_until TIMESTAMPTZ,        -- a 429 or 529 pauses every worker until then
    coordinator TEXT,                -- the worker coordinating the run's message batches
    coordinator_until TIMESTAMPTZ
);
-- Orders the events of a document across tables.
CREATE SEQUENCE extract_events;
CREATE TABLE extract_documents (
    run TEXT NOT NULL REFERENCES extract_runs (name),
    id TEXT NOT NULL,
    position BIGINT NOT NULL,        -- its place among the run's documents
    content TEXT NOT NULL,           -- digest of its content, the tool and the instructions
    state TEXT NOT NULL,             -- 'pending', 'valid', 'escalated', 'failed'
    lease_owner TEXT,                -- the worker running it
    lease_until TIMESTAMPTZ,
    PRIMARY KEY (run, id)
);
CREATE INDEX extract_documents_pending ON extract_documents (run, position) WHERE state = 'pending';
CREATE TABLE extract_replies (
    at BIGINT PRIMARY KEY DEFAULT nextval('extract_events'),
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    prompt TEXT NOT NULL,            -- digest of the correction it answered ('' on a first attempt)
    batch TEXT,
    reply TEXT NOT NULL,             -- the Reply as JSON
    done BOOLEAN NOT NULL,           -- whether it ended the document's run
    worker TEXT NOT NULL,
    UNIQUE (run, document, content, attempt)
);
CREATE TABLE extract_outcomes (
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    status TEXT NOT NULL,            -- 'ok', 'escalated'
    packet TEXT NOT NULL,            -- the outcome packet as JSON
    attempts INTEGER NOT NULL,
    usage TEXT NOT NULL,             -- Usage as JSON
    facts TEXT NOT NULL,             -- what the run's statistics count of it, as JSON
    reviewed BOOLEAN NOT NULL DEFAULT false,
    PRIMARY KEY (run, document)
);
CREATE TABLE extract_failures (
    at BIGINT PRIMARY KEY DEFAULT nextval('extract_events'),
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    batch TEXT,
    error TEXT NOT NULL
);
CREATE TABLE extract_batches (
    intent BIGSERIAL PRIMARY KEY,
    run TEXT NOT NULL,
    token TEXT NOT NULL UNIQUE,      -- the coordinator's name for it: sending it twice records it once
    created_at BIGINT NOT NULL,      -- unix seconds, committed before the create call
    requests BIGINT NOT NULL,
    documents TEXT NOT NULL,         -- [[id, attempt, content], ...] as JSON
    id TEXT UNIQUE,                  -- the API's batch id, once it answered
    collected BOOLEAN NOT NULL DEFAULT false,
    abandoned BOOLEAN NOT NULL DEFAULT false
);
CREATE TABLE extract_resends (
    at BIGINT PRIMARY KEY DEFAULT nextval('extract_events'),
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    batch TEXT NOT NULL,
    reason TEXT NOT NULL,
    counted BOOLEAN NOT NULL
);
CREATE TABLE extract_reviews (
    at BIGINT PRIMARY KEY DEFAULT nextval('extract_events'),
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    fix TEXT NOT NULL,               -- the merge patch, as JSON
    reviewer TEXT,                   -- who, when and what changed, where recorded
    reviewed_at TEXT,                -- RFC 3339
    fields_before TEXT,              -- the changed fields before and after, JSON objects
    fields_after TEXT,
    overrode TEXT                    -- the fingerprints of the violations overridden, a JSON list
);
CREATE TABLE extract_rejections (
    at BIGINT PRIMARY KEY DEFAULT nextval('extract_events'),
    run TEXT NOT NULL,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    rejected_at TEXT NOT NULL,       -- RFC 3339
    reason TEXT NOT NULL
);
CREATE INDEX extract_replies_by_document ON extract_replies (run, document, at);
CREATE INDEX extract_failures_by_document ON extract_failures (run, document, at);
CREATE INDEX extract_resends_by_document ON extract_resends (run, document, at);
CREATE INDEX extract_reviews_by_document ON extract_reviews (run, document, at);
