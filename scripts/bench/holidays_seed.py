#!/usr/bin/env python3
"""Seeds the company for holidays.sh through the API: holidays_seed.py BASE_URL ADMIN_TOKEN N YEAR.
N employees (POST /api/v1/admin/users), each logged in once and filing two or three requests in
June of YEAR (POST /api/v1/holidays, a half day now and then); the admin approves about two in
three (POST /api/v1/admin/holidays/{id}/approve). 8 keep-alive connections, so the writes share
group commits; the server runs with a cheap password hash for the logins (--password-hash-log-n 10).
Prints the username of the first employee (password "bench password 1"), whose view the benchmark measures.
"""
import datetime
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ApiClient, seed_in_threads  # noqa: E402

PASSWORD = "bench password 1"


def seed(people, base, admin_token, year, failures, seed_value):
    api = ApiClient(base, failures)
    call = api.call
    rng = random.Random(seed_value)

    june = [datetime.date(year, 6, d) for d in range(1, 31)]
    for username in people:
        if call("POST", "/api/v1/admin/users", {"username": username, "email": f"{username}@example.com",
                                                 "displayName": username.replace("user", "Person "), "password": PASSWORD},
                admin_token) is None:
            continue
        login = call("POST", "/api/v1/auth/login", {"login": username, "password": PASSWORD}, None)
        if login is None:
            continue
        # Two or three short absences that never share a day: one per ten-day stretch, each
        # starting on a weekday (so it holds a working day).
        for stretch in rng.sample(range(3), rng.choice((2, 3))):
            start = rng.choice([d for d in june[stretch * 10:stretch * 10 + 5] if d.isoweekday() <= 5])
            end = start + datetime.timedelta(days=rng.randrange(5))
            body = {"start": start.isoformat(), "end": end.isoformat(), "halfEnd": rng.random() < 0.2}
            made = call("POST", "/api/v1/holidays", body, login["token"])
            if made and rng.random() < 0.67:
                call("POST", f"/api/v1/admin/holidays/{made['id']}/approve", {}, admin_token)
    api.close()


def main():
    base, token, count, year = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    people = [f"user{i:05d}" for i in range(count)]
    seed_in_threads(seed, people, base, token, year)
    print(people[0])


if __name__ == "__main__":
    main()
