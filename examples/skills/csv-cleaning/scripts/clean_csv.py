#!/usr/bin/env python3
"""Profile or clean a CSV file with the standard library only.

Usage:
  clean_csv.py profile FILE
  clean_csv.py clean FILE SCHEMA.json OUT.csv

`clean` writes OUT.csv, OUT.rejected.csv (rows that fail the schema) and
OUT.changes.txt (what every step changed).
"""
import csv
import json
import re
import sys
from collections import Counter
from datetime import datetime
from decimal import Decimal, InvalidOperation

EMPTY = {"", "n/a", "na", "null", "none", "-"}


def read(path):
    raw = open(path, "rb").read()
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            text = raw.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|")
    rows = list(csv.reader(text.splitlines(), dialect))
    return encoding, dialect.delimiter, rows


def snake(name):
    return re.sub(r"[^0-9a-z]+", "_", name.strip().lower()).strip("_") or "column"


def profile(path):
    encoding, delimiter, rows = read(path)
    header, body = rows[0], rows[1:]
    print(f"encoding={encoding} delimiter={delimiter!r} rows={len(body)} columns={len(header)}")
    ragged = [i + 2 for i, r in enumerate(body) if len(r) != len(header)]
    if ragged:
        print(f"rows with a different field count (line numbers): {ragged}")
    for i, name in enumerate(header):
        values = [r[i].strip() for r in body if i < len(r)]
        empty = sum(v.lower() in EMPTY for v in values)
        print(f"- {name.strip()!r}: empty={empty}/{len(values)} distinct={len(set(values))} "
              f"samples={[v for v in values if v.lower() not in EMPTY][:3]}")


def convert(value, column):
    kind = column["type"]
    if kind == "integer":
        return str(int(value))
    if kind == "decimal":
        sep = column.get("decimalSeparator", ".")
        normal = value.replace("." if sep == "," else ",", "").replace(sep, ".")
        return str(Decimal(normal))
    if kind == "boolean":
        low = value.lower()
        if low in column["true"]:
            return "true"
        if low in column["false"]:
            return "false"
        raise ValueError(f"not a boolean: {value!r}")
    if kind == "date":
        for fmt in column.get("inputFormats", ["YYYY-MM-DD"]):
            py = fmt.replace("YYYY", "%Y").replace("MM", "%m").replace("DD", "%d")
            try:
                return datetime.strptime(value, py).date().isoformat()
            except ValueError:
                continue
        raise ValueError(f"not a date in {column.get('inputFormats')}: {value!r}")
    return value


def clean(path, schema_path, out_path):
    schema = json.load(open(schema_path, encoding="utf-8"))["columns"]
    _, _, rows = read(path)
    header = [snake(h) for h in rows[0]]
    changes = Counter()
    seen, kept, rejected = set(), [], []
    for row in rows[1:]:
        cells = [c.strip() for c in row]
        changes["trimmed"] += sum(a != b for a, b in zip(row, cells))
        cells = ["" if c.lower() in EMPTY else c for c in cells]
        if tuple(cells) in seen:
            changes["duplicates removed"] += 1
            continue
        seen.add(tuple(cells))
        record, problems = {}, []
        for column in schema:
            value = cells[header.index(column["name"])] if column["name"] in header else ""
            if value == "":
                if column.get("required"):
                    problems.append(f"{column['name']} is required")
                record[column["name"]] = ""
                continue
            try:
                record[column["name"]] = convert(value, column)
            except (ValueError, InvalidOperation) as e:
                problems.append(f"{column['name']}: {e}")
        (rejected if problems else kept).append((record, problems))
    names = [c["name"] for c in schema]
    with open(out_path, "w", newline="", encoding="utf-8") as out:
        w = csv.DictWriter(out, names)
        w.writeheader()
        w.writerows(r for r, _ in kept)
    with open(out_path.replace(".csv", ".rejected.csv"), "w", newline="", encoding="utf-8") as out:
        w = csv.writer(out)
        w.writerow(names + ["problems"])
        w.writerows([r.get(n, "") for n in names] + ["; ".join(p)] for r, p in rejected)
    with open(out_path.replace(".csv", ".changes.txt"), "w", encoding="utf-8") as out:
        for k, v in changes.items():
            out.write(f"{k}: {v}\n")
        out.write(f"rows kept: {len(kept)}\nrows rejected: {len(rejected)}\n")
    print(f"kept {len(kept)} rows, rejected {len(rejected)}; see {out_path}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "profile":
        profile(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "clean":
        clean(*sys.argv[2:])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
