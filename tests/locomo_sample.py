"""A tiny synthetic conversation in LoCoMo's format (``bench.locomo``), for the tests of the LoCoMo harnesses: two
sessions, an image caption, evidence ids to repair, and one question of each category the harness scores."""

from __future__ import annotations

SAMPLE = {
    "sample_id": "synthetic-1",
    "conversation": {
        "speaker_a": "Ada",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "Hi Bo!"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "I adopted a greyhound called Comet last week."},
            {"speaker": "Ada", "dia_id": "D1:3", "text": "I started pottery classes on Tuesdays.",
             "img_url": ["http://example.invalid/p.jpg"], "blip_caption": "a photo of a clay bowl"},
        ],
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "Comet and I ran a charity race on Sunday."},
            {"speaker": "Ada", "dia_id": "D2:2", "text": "My pottery bowl won a prize at the county fair."},
        ],
        "session_3_date_time": "9:00 am on 1 July, 2023",
    },
    "qa": [
        {"question": "What is the name of Bo's greyhound?", "answer": "Comet", "evidence": ["D1:2"], "category": 4},
        {"question": "What did Ada make in pottery class?", "answer": "a bowl", "evidence": ["D1:3; D2:2"],
         "category": 1},
        {"question": "When did Bo run a charity race?", "answer": "June 2023", "evidence": ["D2:01", "D9:9"],
         "category": 2},
        {"question": "What is Ada's favourite colour?", "adversarial_answer": "blue", "evidence": [], "category": 5},
    ],
}
