"""Everyday conversations around the bundled sample's hand-written ones, generated from a seed.

Why: with only its ten hand-written messages per user, every question returned nearly the whole memory,
so the demo could not show recall choosing. A few hundred messages of ordinary chat per user (work,
cooking, errands, films, weather...) on topics the demo questions do not ask about make the evidence
something to find. The templates are written for this sample; the same seed gives the same text.
"""

import random
from collections.abc import Iterator
from datetime import datetime, timedelta

# topic -> (what the user says, what the assistant answers); {x} slots are filled from _FILL.
_TOPICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "work": (("The {meeting} ran over again, I barely had time for lunch.",
              "Can you help me word an email to {colleague} about the {project} deadline?",
              "I finally shipped the {project} update today.",
              "{colleague} wants the slides for {project} by {weekday}."),
             ("Here's a short draft you can adapt for {colleague}.",
              "Well done on getting {project} out the door.",
              "Maybe block an hour on {weekday} morning for the slides.")),
    "cooking": (("I tried a new {dish} recipe tonight, a bit too salty.",
                 "What can I make with {ingredient} and rice?",
                 "My {dish} finally came out right on the third try."),
                ("Next time add the salt at the end and taste as you go.",
                 "A quick stir-fry with {ingredient} works well with rice.",
                 "Third time lucky: write down what you changed.")),
    "errands": (("I need to pick up {item} before the shop closes at six.",
                 "Remind me to renew the {document} next week.",
                 "The {item} I ordered arrived broken, so I'm sending it back."),
                ("I'll remind you about the {document} on Monday.",
                 "Keep the box and the receipt for the return.",
                 "Shall I add {item} to your shopping list?")),
    "films": (("We watched {film} last night, the ending surprised me.",
               "Any series like {film} you'd suggest for the weekend?",
               "{film} was slower than I expected but the music was great."),
              ("If you liked {film}, a slow-burn mystery might suit you.",
               "The soundtrack is often what people remember most.",
               "I'd try something lighter after that one.")),
    "weather": (("It's been raining all {weekday}, I skipped my walk.",
                 "Is it worth taking an umbrella tomorrow?",
                 "Lovely sunny afternoon, I sat outside with a coffee."),
                ("A rainy day is a good excuse for a book.",
                 "Tomorrow looks showery, so yes, take one.",
                 "Sounds like a perfect break.")),
    "tech": (("My laptop keeps asking to restart for an update.",
              "How do I back up my phone photos to the {device}?",
              "The {device} stopped connecting to the wifi again."),
             ("Let it update overnight so it doesn't interrupt you.",
              "Turn on automatic backup in the settings, then check it once.",
              "Restarting the router usually fixes that.")),
    "fitness": (("Did a {minutes} minute walk at lunch today.",
                 "My shoulders are stiff from sitting all day.",
                 "I went to the gym twice this week, small win."),
                ("A {minutes} minute walk is a good habit to keep.",
                 "A few stretches every hour can help with stiff shoulders.",
                 "Twice is great, consistency beats intensity.")),
    "reading": (("I started {book} on the train this morning.",
                 "I can't get into {book}, the first chapters drag.",
                 "Finished {book}, I'd give it four stars."),
                ("Some books take fifty pages to get going.",
                 "Four stars is a good read; what would you read next?",
                 "Train reading is the best kind.")),
}
_FILL = {
    "meeting": ("weekly sync", "budget review", "planning meeting", "all-hands"),
    "colleague": ("Jordan", "Sasha", "Kemal", "Lin", "Oscar"),
    "project": ("onboarding", "billing", "dashboard", "newsletter"),
    "weekday": ("Monday", "Wednesday", "Thursday", "Friday"),
    "dish": ("risotto", "lentil soup", "banana bread", "omelette", "dal"),
    "ingredient": ("spinach", "mushrooms", "tofu", "carrots"),
    "item": ("printer ink", "a new kettle", "batteries", "a phone charger"),
    "document": ("parking permit", "library card", "gym membership"),
    "film": ("The Quiet Harbour", "Northern Lights", "Paper Moons", "The Last Orchard"),
    "device": ("laptop", "tablet", "smart speaker", "printer"),
    "minutes": ("20", "30", "45"),
    "book": ("The Glass Garden", "A Year of Rivers", "Small Hours", "The Cartographer"),
}


def sessions(user: str, seed: int, count: int, start: datetime, end: datetime
             ) -> Iterator[tuple[str, list[tuple[str, str, str]]]]:
    """`count` sessions of `user` between `start` and `end`: (session_id, [(role, ISO time, text)])."""
    rng = random.Random(f"{user}:{seed}")
    span = (end - start).total_seconds()
    moments = sorted(start + timedelta(seconds=rng.uniform(0, span)) for _ in range(count))
    for number, moment in enumerate(moments, start=1):
        topic = rng.choice(list(_TOPICS))
        said, answers = _TOPICS[topic]
        messages, at = [], moment.replace(microsecond=0)
        for _ in range(rng.randint(2, 4)):
            for role, lines in (("user", said), ("assistant", answers)):
                text = rng.choice(lines).format(**{k: rng.choice(v) for k, v in _FILL.items()})
                messages.append((role, at.isoformat(), text))
                at += timedelta(seconds=rng.randint(20, 240))
        yield f"{user}-c{number}", messages
