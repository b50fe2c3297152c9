"""What makes a good note: the Observer's note-taking rules (spec §5.3), written for this project.

The rules are one constant, built from one block per topic, because the Reflector quotes them
whole: it must know how the notes it rewrites were made. Every rule here is listed, with the
sentence that carries it, in ``processors/observer/README.md``; ``tests/unit/
test_prompt_checklist.py`` fails when a listed sentence disappears from the rendered prompt.

The blocks never name an extractor tag (``<current-task>`` …): a tag only appears in a prompt
whose call asks for that section, so a buffered call's prompt never mentions them.
"""

from __future__ import annotations

STATEMENTS = """1. WHAT THE USER SAYS VS. WHAT THE USER ASKS

Keep apart what the user tells you and what the user asks you.
- A statement about the user's own life, work or situation is a fact: write it as "User stated ...".
  "My sister lives in Porto" → 🔴 (10:02) User stated their sister lives in Porto.
  "I teach chemistry at a high school" → 🔴 (10:03) User stated they teach high-school chemistry.
- A request or a question is not a fact about the user: write it as "User asked ...".
  "Could you draft a cover letter?" → 🔴 (10:05) User asked for a draft cover letter.
  "Which laptop is lighter?" → 🔴 (10:06) User asked which of the two laptops is lighter.
- Something the user means to do is an intention, neither a fact nor a question. Write it as
  "User stated they will ..." or "User stated they need to ...", and add the date it refers to
  when the message gives one.
  "I can't wait to see the exhibition" → User stated they will visit the exhibition.
  "I have to renew my passport" → User stated they need to renew their passport.

Nobody knows the user's life better than the user. When the user has stated a fact and later asks about
the same subject, the earlier statement still holds and answers the question: a later question
never cancels an earlier statement."""

STATE_CHANGES = """2. CHANGES OF STATE

When the user changes something, write the new state together with what it replaces, so that a
later reader can tell the current state from the outdated one.
- "I've stopped running, I swim now" → User now swims (replacing running).
- "We moved the meeting to Thursday" → User moved the meeting to Thursday (no longer on the old day).
- "I sold the car, so I take the train" → User sold their car and now commutes by train.
Weak: "User mentioned swimming." Better: "User switched from running to swimming.\""""

DATES = """3. DATES AND TIMES

Every note can carry two moments:
- when it was said: the time of the message, always written at the start as (HH:MM);
- when the thing it is about happens or happened, only when the message refers to another day.
Turn a relative reference into a calendar date at the end of the note, in parentheses:
"(meaning Mon D, YYYY)" when you can work it out exactly, "(estimated ...)" when you can only
approximate it. Work the date out from the date of the message that contains the reference, not
from today. Past references ("yesterday", "two weeks ago", "last summer", "in April") and future
ones ("tonight", "next Monday", "in three days") both count. A span may be written as a range
("meaning Mar 8-9, 2025") and a rough time as part of a month ("estimated early Feb 2025").
Do not add an end date when:
- the note is about the present and refers to no other time;
- the reference is too vague to place on a calendar ("recently", "some time ago", "lately", "soon").
Never repeat the message's own date at the end just because a note has no time reference.

Format:
- with a reference: (HH:MM) note. (meaning DATE)
- without: (HH:MM) note.

Examples, for a message sent on Mar 5, 2025 (a Wednesday):
* 🔴 (18:40) User will fly to Oslo on Friday. (meaning Mar 7, 2025)
* 🔴 (18:41) User's brother got married in January. (meaning Jan 2025)
* 🔴 (18:42) User collects vintage cameras.
  ^ a present preference, no time reference: no end date
* 🔴 (18:43) User started learning the cello recently.
  ^ "recently" cannot be placed: no end date
Wrong: (18:44) User bought a tent (estimated late Feb 2025) a couple of weeks ago.
Right: (18:44) User bought a tent a couple of weeks ago. (estimated late Feb 2025)
  ^ the message time opens the note, the referenced date closes it, never in between

One event per note: when a message mentions several events, write one note for each, and give
each of them its own end date, even when they share it.
Wrong: User will paint the fence this weekend and host a barbecue on Sunday.
Right:
* 🔴 (18:45) User will paint the fence this weekend. (meaning Mar 8-9, 2025)
* 🔴 (18:45) User will host a barbecue on Sunday. (meaning Mar 9, 2025)
Wrong: User joined a gym recently and starts a new job next month.
Right:
* 🔴 (18:46) User joined a gym recently.
* 🔴 (18:46) User starts a new job next month. (meaning Apr 2025)
The end-of-note date is what later questions about "when" are answered from: always put it at
the end, in parentheses."""

WORDING = """4. WORDING

Keep the user's own unusual words. When the user calls something by an unexpected name, quote it.
Weak: User went for a walk. Better: User went on their "thinking loop" (their name for a long walk).

Use exact verbs. Vague verbs such as "get", "got", "have" or "do" hide what happened; say which
action it was:
- regularly receiving something → subscribed to, enrolled in, has a membership of
- receiving something once → bought, ordered, was given, picked up, borrowed
- "signed up" → registered for, enrolled in, subscribed to
- "stopped getting" → cancelled, unsubscribed from, ended
Weak: User got a bike. Better: User bought a second-hand bike. / User was given a bike by their aunt.
When the assistant restates the user's vague wording more precisely and the user agrees, use the
assistant's precise wording."""

ASSISTANT_DETAILS = """5. DETAILS OF WHAT THE ASSISTANT PRODUCED

When the assistant gives the user something the user asked for (a list, a recommendation, a
plan, a piece of writing, a calculation), keep what makes each item different from the others, so
that a later question about one of them can still be answered.
- Recommendations: each item with the attribute that sets it apart.
  Weak: Assistant suggested four campsites.
  Better: Assistant suggested campsites: Pine Hollow (lakeside, no pets), Red Bluff (showers,
  booked out in July), Cedar Flat (free, 4x4 access only), Mill Creek (closest to town).
- Names, handles, titles and identifiers: keep them all, each with what it is for.
  Weak: Assistant named some podcasts about history.
  Better: Assistant named podcasts: "Deep Past" (archaeology), "The Long Road" (trade routes),
  "Empire Files" (Roman politics).
- Writing and other creative work: keep its structure and its key lines.
  Weak: Assistant wrote a toast for the wedding.
  Better: Assistant wrote a 3-part wedding toast: how the couple met (at a chess club), a story
  about the groom's cooking, closing line "To the best move either of you ever made."
- Numbers and technical results: keep the exact values and units.
  Weak: Assistant explained the loan options.
  Better: Assistant compared loans: 15 years at 5.1% = $1,912/month, 30 years at 5.8% = $1,408/month.
- Quantities: keep how many of each thing, and put the count before the other details.
  Better: Assistant's packing list: 3 shirts (linen), 2 trousers (one formal), 1 rain jacket.
- The user's part in an event: keep the role, not just the presence.
  Weak: User went to the conference. Better: User gave a talk at the conference (on soil sensors).
  Roles worth keeping: speaker, host, organiser, volunteer, captain, judge, mentor, guest, helper."""

CONTEXT = """6. WHAT ELSE TO KEEP

- the user's current project or question, and how earlier topics turned out;
- what the user already understands and what still confuses them;
- requirements, constraints and limits the user set;
- the content of the assistant's explanations and summaries, in enough detail that the assistant
  remembers what it has already explained;
- answers to the user's questions, with the context needed to give the same answer again;
- relevant code, commands and file paths;
- preferences: likes, dislikes, favourites, habits;
- text that may have to be reproduced exactly (formatted text, tables, ASCII art, a draft the user
  and assistant are editing together): keep it word for word;
- sequences, units, measurements and other specific data;
- who, what, where and when of every event: if the user went on a trip, note with whom, where to,
  when, and what happened there, not only that a trip took place;
- for every person, place or thing described, the attributes that identify it later: where it is,
  what it specialises in, what is special about it, who it belongs to. The name alone is not
  enough; when there are several, keep these attributes for each of them."""

USER_MESSAGES = """7. THE USER'S MESSAGES

The user's messages are the most important part of the record.
- Short and medium-length messages: keep them almost word for word (in your own words, nothing lost).
- Very long messages: summarise them, and quote the phrases that carry the user's intent.
- Once the conversation window moves on, your notes are all that remains of what the user said."""

REPETITION = """8. NO REPEATS; GROUP SIMILAR ACTIONS

- Do not write a note again in a later turn when nothing new happened.
- When the assistant does the same kind of action many times (opening files, searching, running
  the same tool), write one parent note and put each new result in an indented sub-note.
Repetitive:
* 🟡 (11:20) Agent ran the tests for the parser
* 🟡 (11:21) Agent ran the tests for the parser
* 🟡 (11:22) Agent ran the tests for the parser
Grouped:
* 🟡 (11:20) Agent debugged the failing parser tests
  * -> first run: 4 failures, all on empty input
  * -> after the guard for empty input: 1 failure (unicode names)
  * -> after the fix: all 37 tests pass
Add a new note for a repeated action only when its result changes the picture."""

NEXT_STEPS = """9. WHAT COMES NEXT

- What worked well in the assistant's explanations, and what needs a follow-up or a clarification.
- The user's goals and next steps. When the user asks for one specific thing, or says not to do a
  step, mark the other possible next steps as "waiting for user": they wait for the user's go-ahead
  unless the user has said to carry on with all of them."""

COMPLETION = """10. MARKING WHAT IS DONE (✅)

A ✅ note is a signal to the assistant that something is finished. Without it the assistant may
forget that the work is done and repeat it, reopen it, or keep going. A ✅ note answers one
question: what exactly is now done?
Use ✅ when:
- the user confirms that something worked or was answered ("great, that fixed it", "got it");
- the assistant settled a factual question with a full, definite answer and the conversation went on;
- a task with several steps reached its goal;
- the user acknowledged receiving what they asked for;
- a concrete piece of the work (a subtask, a fix, a deliverable, a step of an implementation) was finished.
No ✅ when:
- the assistant only answered: the user may still correct it;
- the topic was put aside without being resolved ("I'll look at it tomorrow");
- the user's reaction is ambiguous.
Write it as a sub-note of the note it completes:
* 🔴 (16:05) User asked why the invoice totals were off by a cent
  * -> Agent found rounding per line instead of per invoice
  * ✅ User confirmed totals now match the bank statement
or, when it closes a larger piece of work, as a note of its own:
* ✅ (16:30) Invoice export finished: totals rounded per invoice, user confirmed
A ✅ note is brief yet names exactly what was finished; a concrete result beats an abstract
status."""

EXTRACTION_RULES = "\n\n".join(
    [STATEMENTS, STATE_CHANGES, DATES, WORDING, ASSISTANT_DETAILS, CONTEXT, USER_MESSAGES, REPETITION, NEXT_STEPS, COMPLETION]
)
