"""Fixtures shared by the corpus tests (not a test module itself)."""
import struct


def write_mo(entries):
    """A GNU .mo file (little-endian, no hash table) from {msgid: msgstr}; keys may hold "\\x04" and "\\x00"."""
    entries = dict(entries)
    entries.setdefault("", "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n")
    keys = sorted(entries, key=lambda k: k.encode("utf-8"))
    ids = [k.encode("utf-8") for k in keys]
    strs = [entries[k].encode("utf-8") for k in keys]
    n = len(keys)
    table_ids, table_strs = 28, 28 + 8 * n
    data = 28 + 16 * n
    id_table, str_table, blob = [], [], b""
    for s, table in [(s, id_table) for s in ids] + [(s, str_table) for s in strs]:
        table.append((len(s), data + len(blob)))
        blob += s + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, n, table_ids, table_strs, 0, data + len(blob))
    for length, offset in id_table + str_table:
        out += struct.pack("<2I", length, offset)
    return out + blob
