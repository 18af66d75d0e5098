-- Format 2: each review's reviewer, time (RFC 3339), the changed fields
-- before and after (JSON objects) and the fingerprints of the violations it
-- overrode (a JSON list); rejected documents.
ALTER TABLE reviews ADD COLUMN reviewer TEXT;
ALTER TABLE reviews ADD COLUMN reviewed_at TEXT;
ALTER TABLE reviews ADD COLUMN before TEXT;
ALTER TABLE reviews ADD COLUMN after TEXT;
ALTER TABLE reviews ADD COLUMN overrode TEXT;
CREATE TABLE rejections (
    at INTEGER PRIMARY KEY,
    document TEXT NOT NULL,
    content TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    rejected_at TEXT NOT NULL,  -- RFC 3339
    reason TEXT NOT NULL
);
