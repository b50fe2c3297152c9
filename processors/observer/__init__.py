"""The Observer: render messages, prompt the model, parse its notes (``run_observer``)."""
