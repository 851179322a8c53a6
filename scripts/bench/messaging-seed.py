#!/usr/bin/env python3
"""Seeds the messaging tables for messaging-read.sh through SQL: messaging-seed.py DB USER_ID CHATS
MESSAGES BIG_CHAT_MESSAGES.

The database has been migrated by `sgem-server migrate` and holds the user USER_ID (created by
`admin create-user`); the server is not running. CHATS groups are created with USER_ID as their
admin; the first holds BIG_CHAT_MESSAGES messages, the others share the rest of MESSAGES. Bodies
are 6 to 14 words drawn (seeded, so every run is the same) from a vocabulary of common and rare
words with accents, so searches hit from a few to tens of thousands of messages. The full-text
index is then rebuilt from the messages with FTS5's 'rebuild' command, which fills it exactly as
the server's own inserts would (same table, same tokenizer). Prints one JSON line with the counts
and the seconds each step took.
"""
import json
import random
import sqlite3
import sys
import time

COMMON = ["reunión", "mañana", "proyecto", "cliente", "informe", "equipo", "revisar", "enviar", "oficina", "semana",
          "meeting", "tomorrow", "project", "customer", "report", "team", "review", "send", "office", "week",
          "café", "lunch", "deadline", "update", "thanks", "please", "today", "budget", "design", "release"]
RARE = ["zeppelin", "ornitorrinco", "quásar", "kumquat", "fjord", "xilófono", "bergamota", "narval", "tundra", "ñandú"]


def main():
    db_path, user = sys.argv[1], int(sys.argv[2])
    chats, messages, big = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    rng = random.Random(8)
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = OFF")  # seeding only; the server's own writes are durable
    now = int(time.time() * 1000) - messages
    started = time.time()
    chat_ids = []
    for i in range(chats):
        cur = db.execute("""INSERT INTO messaging_chats (kind, name, description, tags, public, creator_id, created_at,
                            last_activity_at) VALUES ('group', ?, '', '[]', 0, ?, ?, ?)""", (f"Bench group {i + 1}", user, now, now))
        chat_ids.append(cur.lastrowid)
        db.execute("INSERT INTO messaging_members (chat_id, user_id, admin, joined_at, last_read_id) VALUES (?, ?, 1, ?, 0)",
                   (cur.lastrowid, user, now))

    def rows():
        rest = messages - big
        for n in range(messages):
            chat = chat_ids[0] if n < big or chats == 1 else chat_ids[1 + (n - big) % (chats - 1)] if rest else chat_ids[0]
            words = [rng.choice(COMMON) for _ in range(rng.randint(5, 13))]
            if rng.random() < 0.02:
                words.insert(rng.randrange(len(words)), rng.choice(RARE))
            yield (chat, user, " ".join(words).capitalize(), now + n)

    db.executemany("INSERT INTO messaging_messages (chat_id, sender_id, body, created_at) VALUES (?, ?, ?, ?)", rows())
    db.execute("UPDATE messaging_chats SET last_activity_at = ?", (now + messages,))
    db.commit()
    inserted = time.time()
    db.execute("INSERT INTO messaging_search (messaging_search) VALUES ('rebuild')")
    db.execute("INSERT INTO messaging_search (messaging_search) VALUES ('optimize')")
    db.commit()
    indexed = time.time()
    counts = {
        "chats": db.execute("SELECT COUNT(*) FROM messaging_chats").fetchone()[0],
        "messages": db.execute("SELECT COUNT(*) FROM messaging_messages").fetchone()[0],
        "big_chat": chat_ids[0],
        "big_chat_messages": db.execute("SELECT COUNT(*) FROM messaging_messages WHERE chat_id = ?", (chat_ids[0],)).fetchone()[0],
        "insert_s": round(inserted - started, 1),
        "index_s": round(indexed - inserted, 1),
    }
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
