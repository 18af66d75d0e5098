-- One vocabulary across tables and both databases, and a call keyed by
-- part, rung and attempt.
--   * `seq` orders a document's events across tables (it was `at`, a name
--     that read as a time);
--   * a state is one word everywhere: an outcome's `state` is 'valid' or
--     'escalated', as its document's is (it was `status`, 'ok' or 'escalated');
--   * every time is a TIMESTAMPTZ (a batch's `created_at` was unix seconds,
--     a review's and a rejection's time RFC 3339 text);
--   * a reply is keyed by its document's content, its part (0: the whole
--     document; k: window k), its rung on a ladder of models (0: the first)
--     and its attempt, and says whether it is the prefix of a stream that
--     was cancelled.
ALTER TABLE extract_replies RENAME COLUMN at TO seq;
ALTER TABLE extract_replies
    ADD COLUMN part INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN rung INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN cancelled BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE extract_replies DROP CONSTRAINT extract_replies_run_document_content_attempt_key;
ALTER TABLE extract_replies ADD CONSTRAINT extract_replies_call UNIQUE (run, document, content, part, rung, attempt);
ALTER TABLE extract_failures RENAME COLUMN at TO seq;
ALTER TABLE extract_resends RENAME COLUMN at TO seq;
ALTER TABLE extract_reviews RENAME COLUMN at TO seq;
ALTER TABLE extract_rejections RENAME COLUMN at TO seq;
ALTER TABLE extract_outcomes RENAME COLUMN status TO state;
UPDATE extract_outcomes SET state = 'valid' WHERE state = 'ok';
ALTER TABLE extract_batches ALTER COLUMN created_at TYPE TIMESTAMPTZ USING to_timestamp(created_at);
ALTER TABLE extract_reviews ALTER COLUMN reviewed_at TYPE TIMESTAMPTZ USING reviewed_at::timestamptz;
ALTER TABLE extract_rejections ALTER COLUMN rejected_at TYPE TIMESTAMPTZ USING rejected_at::timestamptz;

-- The documents that wait for a reviewer: escalated for their current
-- content, neither reviewed nor rejected since. The rule that refuses a
-- second decision on one document.
CREATE VIEW extract_waiting AS
    SELECT d.run, d.id AS document, d.content, o.packet
    FROM extract_documents d
    JOIN extract_outcomes o ON o.run = d.run AND o.document = d.id AND o.content = d.content
    WHERE o.state = 'escalated' AND NOT o.reviewed
      AND NOT EXISTS (SELECT 1 FROM extract_rejections r
                      WHERE r.run = d.run AND r.document = d.id AND r.content = d.content);
