"""A small hand-written history in LongMemEval's file format (no benchmark text), for loader and metric tests.

Three questions:
- `hq-assist` (single-session-assistant): the only evidence turn is the assistant's; the session
  `chat_rep` appears twice in its haystack (two dates), and `answer_baker_1` is its answer session;
- `hq-plants` (multi-session): two user evidence turns in two answer sessions; it holds `chat_rep`
  too, with another date (session ids repeat across questions);
- `hq-none_abs` (knowledge-update, abstention): no `has_answer` turn.
"""

import json
from pathlib import Path


def _turn(role: str, content: str, has_answer: bool | None = None) -> dict:
    turn = {"role": role, "content": content}
    if has_answer is not None:
        turn["has_answer"] = has_answer
    return turn


def _rep() -> list[dict]:
    return [_turn("user", "Can you recommend a podcast about medieval history?"),
            _turn("assistant", "A long-form narrative history podcast would suit you.")]


def history() -> list[dict]:
    return [
        {
            "question_id": "hq-assist",
            "question_type": "single-session-assistant",
            "question": "What name did you suggest for my sourdough starter?",
            "answer": "Clint Yeastwood",
            "question_date": "2023/06/01 (Thu) 10:00",
            "haystack_session_ids": ["chat_garden", "answer_baker_1", "chat_rep", "chat_rep", "chat_trip"],
            "haystack_dates": ["2023/05/10 (Wed) 09:00", "2023/05/12 (Fri) 18:30", "2023/05/15 (Mon) 08:00",
                               "2023/05/20 (Sat) 02:21", "2023/05/25 (Thu) 14:45"],
            "haystack_sessions": [
                [_turn("user", "My tomatoes are wilting in the heat, any tips?"),
                 _turn("assistant", "Water them early in the morning and add mulch around the stems.")],
                [_turn("user", "I started a sourdough starter this week!", False),
                 _turn("assistant", "Congratulations! You could name the starter Clint Yeastwood.", True),
                 _turn("user", "Ha, I love that name.", False)],
                _rep(),
                _rep(),
                [_turn("user", "I am planning a trip to Lisbon in July."),
                 _turn("assistant", "Lisbon in July is warm; book the flights early.")],
            ],
            "answer_session_ids": ["answer_baker_1"],
        },
        {
            "question_id": "hq-plants",
            "question_type": "multi-session",
            "question": "How many tomato plants do I have in total?",
            "answer": "9",
            "question_date": "2023/07/02 (Sun) 20:15",
            "haystack_session_ids": ["answer_gar_1", "chat_rep", "answer_gar_2"],
            "haystack_dates": ["2023/06/03 (Sat) 11:00", "2023/06/10 (Sat) 16:40", "2023/06/20 (Tue) 07:05"],
            "haystack_sessions": [
                [_turn("user", "I planted six tomato plants in the backyard today.", True),
                 _turn("assistant", "Six is a good number for a backyard bed.", False)],
                _rep(),
                [_turn("user", "Which fertiliser suits balcony pots?", False),
                 _turn("assistant", "A slow-release one.", False),
                 _turn("user", "I added three more tomato plants on the balcony.", True)],
            ],
            "answer_session_ids": ["answer_gar_1", "answer_gar_2"],
        },
        {
            "question_id": "hq-none_abs",
            "question_type": "knowledge-update",
            "question": "How often do I play squash?",
            "answer": "The history does not say.",
            "question_date": "2023/07/05 (Wed) 09:00",
            "haystack_session_ids": ["answer_sport_abs_1", "chat_trip"],
            "haystack_dates": ["2023/06/01 (Thu) 12:00", "2023/06/02 (Fri) 12:00"],
            "haystack_sessions": [
                [_turn("user", "I play tennis every Sunday.", False),
                 _turn("assistant", "Tennis is a great workout.", False)],
                [_turn("user", "I am planning a trip to Lisbon in July."),
                 _turn("assistant", "Lisbon in July is warm; book the flights early.")],
            ],
            "answer_session_ids": ["answer_sport_abs_1"],
        },
    ]


def write(folder: Path, items: list[dict] | None = None) -> Path:
    path = Path(folder) / "longmemeval_hand.json"
    path.write_text(json.dumps(history() if items is None else items))
    return path
