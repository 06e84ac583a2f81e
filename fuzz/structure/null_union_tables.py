"""Lets flatc's object API (flatbuffers 2.0.8) hold a union whose table is absent.

    null_union_tables.py HEADER

The structure-aware fuzzer (fuzz/structure/) writes unions that name a type but have no table, as a
corrupt or hostile file can (the flatbuffer verifier accepts them). flatc's generated code already
reads such a union into the object tree (type set, value null) but dereferences the null value when it
packs or copies the union. This edits the generated header in place: Pack writes the type alone, and
a copy keeps the null value. Fails if the generated code no longer has the expected shape.
"""
import re
import sys
from pathlib import Path


def main() -> int:
    header = Path(sys.argv[1])
    text = header.read_text()
    unions = set(re.findall(r"^struct (\w+Union) \{", text, flags=re.M))
    pack = re.compile(r"(inline flatbuffers::Offset<void> (\w+Union)::Pack\(flatbuffers::FlatBufferBuilder &_fbb, "
                      r"const flatbuffers::rehasher_function_t \*_rehasher\) const \{\n  \(void\)_rehasher;\n)")
    copy = re.compile(r"(inline (\w+Union)::\2\(const \2 &u\) : type\(u\.type\), value\(nullptr\) \{\n)")
    text, packs = pack.subn(r"\1  if (value == nullptr) return 0;  // a union naming a type without its table\n", text)
    text, copies = copy.subn(r"\1  if (u.value == nullptr) return;\n", text)
    if not unions or packs != len(unions) or copies != len(unions):
        print(f"null_union_tables.py: {header}: {len(unions)} unions, patched {packs} Pack and {copies} copy "
              "functions; flatc's output changed shape", file=sys.stderr)
        return 1
    header.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
