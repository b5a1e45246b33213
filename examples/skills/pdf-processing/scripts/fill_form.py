#!/usr/bin/env python3
"""Fill an AcroForm PDF from a JSON object of field values.

Usage: fill_form.py FORM.pdf VALUES.json OUT.pdf

Unknown field names are reported and the script exits with status 1 without
writing anything, so a typo never produces a half-filled form.
"""
import json
import sys

from pypdf import PdfReader, PdfWriter


def main(form_path: str, values_path: str, out_path: str) -> int:
    reader = PdfReader(form_path)
    fields = reader.get_fields() or {}
    with open(values_path, encoding="utf-8") as f:
        values = json.load(f)

    unknown = sorted(set(values) - set(fields))
    if unknown:
        print("unknown fields: " + ", ".join(unknown), file=sys.stderr)
        return 1

    writer = PdfWriter()
    writer.append(reader)
    for page in writer.pages:
        writer.update_page_form_field_values(page, values, auto_regenerate=False)
    writer.set_need_appearances_writer(True)
    with open(out_path, "wb") as out:
        writer.write(out)
    print(f"filled {len(values)} fields into {out_path}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
