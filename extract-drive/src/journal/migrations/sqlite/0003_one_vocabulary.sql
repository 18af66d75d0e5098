-- Format 3: one vocabulary across tables and both databases, and a call
-- keyed by part, rung and attempt.
--   * `seq` orders a document's events across tables (it was `at`, a name
--     that read as a time);
--   * a state is one word everywhere: an outcome's `state` is 'valid' or
--     'escalated', as its document's is (it was `status`, 'ok' or 'escalated');
--   * a review's changed fields are `fields_before` and `fields_after`;
--   * every time is RFC 3339 text in UTC (a batch's `created_at` was unix
--     seconds);
--   * a reply is keyed by its document's content, its part (0: the whole
--     document; k: window k), its rung on a ladder of models (0: the first)
--     and its attempt, and says whether it is the prefix of a stream that
--     was cancelled.
ALTER TABLE replies RENAME COLUMN at TO seq;
ALTER TABLE replies ADD COLUMN part INTEGER NOT NULL DEFAULT 0;
ALTER TABLE replies ADD COLUMN rung INTEGER NOT NULL DEFAULT 0;
ALTER TABLE replies ADD COLUMN cancelled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE failures RENAME COLUMN at TO seq;
ALTER TABLE resends RENAME COLUMN at TO seq;
ALTER TABLE reviews RENAME COLUMN at TO seq;
ALTER TABLE reviews RENAME COLUMN before TO fields_before;
ALTER TABLE reviews RENAME COLUMN after TO fields_after;
ALTER TABLE rejections RENAME COLUMN at TO seq;
ALTER TABLE outcomes RENAME COLUMN status TO state;
UPDATE outcomes SET state = 'valid' WHERE state = 'ok';

-- A column's type changes by rebuilding its table.
CREATE TABLE batches_3 (
    intent INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,     -- committed before the create call
    requests INTEGER NOT NULL,
    documents TEXT NOT NULL,      -- [[id, attempt, content], ...] as JSON
    id TEXT UNIQUE,               -- the API's batch id, once it answered
    collected INTEGER NOT NULL DEFAULT 0,
    abandoned INTEGER NOT NULL DEFAULT 0
);
INSERT INTO batches_3 (intent, created_at, requests, documents, id, collected, abandoned)
    SELECT intent, strftime('%Y-%m-%dT%H:%M:%SZ', created_at, 'unixepoch'), requests, documents, id,
           collected, abandoned
    FROM batches;
DROP TABLE batches;
ALTER TABLE batches_3 RENAME TO batches;

-- The documents that wait for a reviewer: escalated for their current
-- content, neither reviewed nor rejected since. The desk's queue, and the
-- rule that refuses a second decision on one document.
CREATE VIEW waiting AS
    SELECT d.id AS document, d.content, o.packet
    FROM documents d JOIN outcomes o ON o.document = d.id AND o.content = d.content
    WHERE o.state = 'escalated' AND o.reviewed = 0
      AND NOT EXISTS (SELECT 1 FROM rejections r WHERE r.document = d.id AND r.content = d.content);
