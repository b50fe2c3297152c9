"""``om eval``: how good is the memory? Replays conversations through the core, then asks a reader
model each question with (a) the OM context, (b) the full history, (c) the most recent messages at
the OM context's token budget, and scores the answers (see README "Measuring memory quality")."""
