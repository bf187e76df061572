"""GPT-2's byte-level alphabet (its bytes_to_unicode): printable bytes keep their character, the others map to
chr(256 + n) in byte order. Shared by the fixture scripts that write byte-level vocabularies."""


def byte_level_alphabet():
    """(bytes, characters): byte bs[i] is spelled cs[i]; the order is GPT-2's (printable bytes first)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return bs, [chr(c) for c in cs]


def bytes_to_unicode():
    """byte -> its character."""
    bs, cs = byte_level_alphabet()
    return dict(zip(bs, cs))
