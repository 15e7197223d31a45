"""Every case of spec/kiln-v2-cases.json through the reference codec."""

import collections
import sys
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spec" / "reference"))

import kiln_ref as K  # noqa: E402
import gen_v2_cases as G  # noqa: E402
from golden import CASES_PATH, limits_of, load_cases, reencode  # noqa: E402

# The wire text's table, copied here on purpose so that a change to the
# generator's own table cannot hide a missing or altered case.
NAMED = {
    "kiln-v2-empty": "accept", "kiln-v2-f32": "accept",
    "kiln-v2-f32-scalar": "accept", "kiln-v2-f32-negzero": "accept",
    "kiln-v2-f64-nan": "accept", "kiln-v2-f16-named": "accept",
    "kiln-v2-bf16": "accept", "kiln-v2-i8": "accept",
    "kiln-v2-bool": "accept", "kiln-v2-u4": "accept",
    "kiln-v2-f8-pair": "accept", "kiln-v2-scales": "accept",
    "kiln-v2-scales-outer": "accept", "kiln-v2-opaque": "accept",
    "kiln-v2-in-struct": "accept", "kiln-v2-framed": "accept",
    "kiln-pod-list-f32": "accept", "kiln-v2-bad-magic": "FRAME",
    "kiln-v2-bad-version": "FRAME", "kiln-v2-empty-name-flag": "TYPE",
    "kiln-v2-le-clear": "FRAME", "kiln-v2-unknown-flag": "FRAME",
    "kiln-v2-reserved": "FRAME", "kiln-v2-directory-eof": "EOF",
    "kiln-v2-count-cap": "LIMIT", "kiln-v2-directory-mismatch": "TYPE",
    "kiln-v2-shape-overflow": "LIMIT", "kiln-v2-length-mismatch": "TYPE",
    "kiln-v2-overlap": "TYPE", "kiln-v2-unaligned": "TYPE",
    "kiln-v2-nonzero-pad": "TYPE", "kiln-v2-duplicate-name": "TYPE",
    "kiln-v2-bad-utf8": "UTF8", "kiln-v2-bool-byte": "TYPE",
    "kiln-v2-scale-count": "TYPE", "kiln-v2-opaque-no-layout": "TYPE",
    "kiln-v2-trailing": "TRAILING", "kiln-v2-high-nibble": "TYPE",
    "kiln-v2-shape-tail": "TYPE", "kiln-v2-dtype-zero": "TYPE",
    "kiln-v2-dtype-reserved": "TYPE", "kiln-v2-payload-overflow": "LIMIT",
    "kiln-list-struct-hostile": "EOF", "kiln-list-struct-short": "EOF",
    "kiln-list-str-short": "EOF", "kiln-pod-list-short": "EOF",
}


def run(case):
    """'accept' or the KilnError code; anything else propagates."""
    try:
        K.check(case["type"], bytes.fromhex(case["hex"]), case["framed"],
                limits_of(case))
    except K.KilnError as exc:
        return exc.code
    return "accept"


class TestCaseFile(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cases = load_cases()
        cls.by_name = {c["name"]: c for c in cls.cases}

    def test_shape_of_every_object(self):
        allowed = {"accept", *K.ERROR_CODES}
        for case in self.cases:
            with self.subTest(case=case.get("name")):
                keys = set(case)
                base = {"name", "type", "framed", "hex", "expect", "note"}
                self.assertTrue(keys == base or keys == base | {"cap"}, keys)
                self.assertIsInstance(case["framed"], bool)
                self.assertIn(case["expect"], allowed)
                self.assertEqual(case["hex"], case["hex"].lower())
                bytes.fromhex(case["hex"])
                self.assertTrue(case["note"])
                if "cap" in case:
                    self.assertIsInstance(case["cap"], int)
                    self.assertLessEqual(case["cap"], K.WIRE_MAX)
                # type text is canonical: it parses and prints back the same
                self.assertEqual(K.type_text(K.parse_type(case["type"])),
                                 case["type"])

    def test_names_unique(self):
        names = [c["name"] for c in self.cases]
        self.assertEqual(len(names), len(set(names)))

    def test_all_46_named_cases(self):
        self.assertEqual(len(NAMED), 46)
        for name, expect in NAMED.items():
            with self.subTest(name=name):
                self.assertIn(name, self.by_name)
                self.assertEqual(self.by_name[name]["expect"], expect)
                self.assertEqual(run(self.by_name[name]), expect)
        own = [n for n in self.by_name if n not in NAMED]
        self.assertTrue(all(n.startswith("kiln-x-") for n in own))
        self.assertGreaterEqual(len(own), 60)

    def test_every_case_verdict(self):
        for case in self.cases:
            with self.subTest(name=case["name"]):
                self.assertEqual(run(case), case["expect"])

    def test_accepted_cases_are_canonical(self):
        for case in self.cases:
            if case["expect"] != "accept":
                continue
            with self.subTest(name=case["name"]):
                data = bytes.fromhex(case["hex"])
                self.assertEqual(reencode(case, data, limits_of(case)), data)

    def test_every_code_is_produced(self):
        counts = collections.Counter(c["expect"] for c in self.cases)
        for code in ("accept", *K.ERROR_CODES):
            self.assertGreater(counts[code], 0, code)

    def test_rejections_are_documented_mutations(self):
        for case in self.cases:
            if case["expect"] == "accept":
                continue
            with self.subTest(name=case["name"]):
                self.assertTrue("Mutation of " in case["note"]
                                or "Bytes of " in case["note"], case["note"])

    def test_lowered_cap_is_what_rejects(self):
        # An unchanged encoder output rejected under a lowered cap must be
        # accepted at the default cap.
        seen = 0
        for case in self.cases:
            if "cap" in case and case["expect"] == "LIMIT" \
                    and "Bytes of " in case["note"]:
                seen += 1
                default = {k: v for k, v in case.items() if k != "cap"}
                with self.subTest(name=case["name"]):
                    self.assertEqual(run(default), "accept")
        self.assertGreater(seen, 0)

    def test_directory_steps_all_hit(self):
        cases = G.build_cases()
        steps = {s for s in cases.steps.values() if s}
        expected = {str(n) for n in range(1, 13)} - {"8"}
        expected |= {"8a", "8b", "8c", "8d"}
        self.assertEqual(steps, expected)


class TestRegeneration(unittest.TestCase):
    def test_generator_reproduces_file(self):
        cases = G.build_cases()
        self.assertEqual(G.validate(cases), [])
        text = G.render(cases)
        self.assertEqual(text, CASES_PATH.read_text(encoding="utf-8"))
        self.assertEqual(G.render(G.build_cases()), text)

    def test_generator_refuses_a_wrong_verdict(self):
        cases = G.build_cases()
        victim = next(c for c in cases.items if c["name"] == "kiln-v2-overlap")
        victim["expect"] = "EOF"
        self.assertTrue(G.validate(cases))

    def test_generator_refuses_a_wrong_step(self):
        cases = G.build_cases()
        cases.steps["kiln-v2-unaligned"] = "9"
        self.assertTrue(G.validate(cases))

    def test_generator_refuses_missing_and_duplicate(self):
        cases = G.build_cases()
        cases.items = [c for c in cases.items if c["name"] != "kiln-v2-bf16"]
        cases.items.append(dict(cases.items[0]))
        problems = " ".join(G.validate(cases))
        self.assertIn("kiln-v2-bf16 is missing", problems)
        self.assertIn("duplicate", problems)


if __name__ == "__main__":
    unittest.main()
