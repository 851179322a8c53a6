#!/usr/bin/env python3
"""Seeds the directory for directory.sh through the API: directory_seed.py BASE_URL TOKEN N.
N people with realistic Spanish, Portuguese, French, German and Nordic accented names and a
position (POST /api/v1/admin/users with a given password, then PATCH for the position and, for
one in ten, active=false), from 8 keep-alive connections so the writes share group commits. The
server runs with a cheap password hash for this (--password-hash-log-n 10), and everything goes
through the server's own code: the folded sort keys and search words are the real ones.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import ApiClient, seed_in_threads  # noqa: E402

FIRST = ["Álvaro", "María", "José", "Lucía", "Sofía", "Martín", "Inés", "Nuño", "Begoña", "Íñigo", "Raúl", "Ángela",
         "João", "Conceição", "Gonçalo", "Zoë", "Chloé", "Hélène", "François", "Jérôme", "Agnès", "Noël", "Björn",
         "Åsa", "Jürgen", "Müller", "Ümit", "Renée", "Mónica", "Víctor", "Ana", "Pablo", "Carmen", "David", "Laura",
         "Elena", "Sergio", "Marta", "Jorge", "Paula", "Andrés", "Tomás", "Verónica", "Ramón", "Dolores", "Jesús"]
LAST = ["García", "Martínez", "López", "Sánchez", "Pérez", "Gómez", "Martín", "Jiménez", "Ruiz", "Hernández", "Díaz",
        "Muñoz", "Álvarez", "Romero", "Alonso", "Gutiérrez", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos",
        "Gil", "Ramírez", "Serrano", "Blanco", "Suárez", "Molina", "Morales", "Ortega", "Delgado", "Castro", "Ortiz",
        "Rubio", "Marín", "Sanz", "Núñez", "Iglesias", "Medina", "Garrido", "Cortés", "Castillo", "Santos", "Lozano",
        "Guerrero", "Cano", "Prieto", "Méndez", "Cruz", "Calvo", "Gallego", "Vidal", "León", "Márquez", "Herrera",
        "Peña", "Flores", "Cabrera", "Campos", "Vega", "Fuentes", "Carrasco", "Diez", "Caballero", "Reyes", "Nieto",
        "Aguilar", "Pascual", "Santana", "Herrero", "Lorenzo", "Montero", "Hidalgo", "Giménez", "Ibáñez", "Ferrer",
        "Durán", "Santiago", "Benítez", "Mora", "Vicente", "Vargas", "Arias", "Carmona", "Crespo", "Román", "Pastor",
        "Soto", "Sáez", "Velasco", "Moya", "Soler", "Parra", "Esteban", "Bravo", "Gallardo", "Rojas", "Gonçalves",
        "Lefèvre", "Größ", "Østergård", "Brontë", "Ångström"]
POSITIONS = ["Técnico de sistemas", "Jefa de ventas", "Contable", "Diseñadora gráfica", "Ingeniero de software",
             "Responsable de compras", "Atención al cliente", "Dirección financiera", "Analista de datos",
             "Recepción", "Logística", "Marketing y comunicación", "Recursos humanos", "Jurídico", "Mantenimiento"]


def seed(people, base, token, failures, _index):
    api = ApiClient(base, failures)

    def call(method, path, payload):
        return api.call(method, path, payload, token)

    for username, name, position, active in people:
        created = call("POST", "/api/v1/admin/users", {"username": username, "email": f"{username}@example.com",
                                                        "displayName": name, "password": "bench password 1"})
        if created is None:
            continue
        change = {"position": position}
        if not active:
            change["active"] = False
        call("PATCH", f"/api/v1/admin/users/{created['user']['id']}", change)
    api.close()


def main():
    base, token, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rng = random.Random(7)
    people = [(f"user{i:05d}", f"{rng.choice(FIRST)} {rng.choice(LAST)} {rng.choice(LAST)}", rng.choice(POSITIONS), i % 10 != 0)
              for i in range(count)]
    seed_in_threads(seed, people, base, token)
    print(f"seeded {count} people")


if __name__ == "__main__":
    main()
