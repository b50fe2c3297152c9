-- A message row the processor refused (issue 18 item 4): the sink stores a message from the messages
-- topic by its record alone, and the processor may still refuse it (a thread another resource owns,
-- an event time too far ahead, a late message it dropped). Its refusal replaces that row (one version
-- above it: streams/sink/rows.py) with one marked refused; readers serve only `refused = 0`.
ALTER TABLE om_messages ADD COLUMN IF NOT EXISTS refused UInt8 DEFAULT 0
    COMMENT '1: a row the processor refused, hidden from every reader';
