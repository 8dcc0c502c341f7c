"""The span tagger's training data, decoding helpers and signal lexicon (no model loaded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sarg_integrations.errors import ConfigError, InputError, ModelLoadError
from sarg_integrations.extraction.choice import default_extractor, resolve_extractor
from sarg_integrations.extraction.tagger import (
    TaggerExtractor,
    relation_label,
    relation_type_for,
    split_sentences,
)
from sarg_integrations.extraction.tagger_data import (
    parse_tagged_text,
    read_training_file,
    read_training_files,
    split_by_group,
)
from sarg_integrations.extraction.tagger_inference import bio_spans, widen_to_words
from sarg_integrations.extraction.tagger_model import TaggerConfig
from sarg_integrations.extraction.tagger_training import balance_negatives
from sarg_integrations.extraction.union import UnionExtractor, same_relation
from sarg_integrations.schema import RelationType, SourceDocument, Triple

HEADER = "corpus,doc_id,sent_id,eg_id,index,text,text_w_pairs,seq_label,pair_label,context,num_sents\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ----------------------------------------------------------------- markup


def test_parse_tagged_text_nested_signal_inside_argument() -> None:
    text, spans = parse_tagged_text(
        "<ARG1>The protest</ARG1> was <ARG0><SIG0>a call for</SIG0> the resignation</ARG0> ."
    )
    assert text == "The protest was a call for the resignation ."
    assert text[slice(*spans["ARG0"][0])] == "a call for the resignation"
    assert text[slice(*spans["SIG0"][0])] == "a call for"
    assert text[slice(*spans["ARG1"][0])] == "The protest"


@pytest.mark.parametrize(
    ("marked", "why"),
    [("<ARG0>rain caused floods", "never closed"), ("rain</ARG0> caused", "without an opening")],
)
def test_parse_tagged_text_rejects_broken_markup(marked: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        parse_tagged_text(marked)


# ----------------------------------------------------------------- CSV reader


def test_csv_keeps_negatives_but_not_candidate_pairs(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "t.csv",
        HEADER
        + 'cnc,d1,1,0,i0,x,"<ARG0>Rain</ARG0> <SIG0>caused</SIG0> <ARG1>floods</ARG1>",1,1,,1\n'
        + 'altlex,d2,5,0,i2,y,"<ARG0>Cats</ARG0> sleep and <ARG1>dogs</ARG1> bark",0,0,,1\n'
        + 'altlex,d3,6,0,i3,z,"<ARG0>A</ARG0> then <ARG1>B</ARG1>",1,0,,1\n',
    )
    by_text = {s.text: s for s in read_training_file(path)}
    assert set(by_text) == {"Rain caused floods", "Cats sleep and dogs bark"}
    rain = by_text["Rain caused floods"]
    assert rain.has_signals and rain.pairs[0].signals == ((5, 11),)
    negative = by_text["Cats sleep and dogs bark"]
    assert negative.pairs == [] and not negative.has_signals
    # "A then B" is a candidate pair (pair_label 0) in a causal sentence: not a negative.


def test_csv_two_rows_of_one_sentence_make_two_pairs(tmp_path: Path) -> None:
    row = 'cnc,d1,1,{k},i{k},x,"{m}",1,1,,1\n'
    path = write(
        tmp_path,
        "t.csv",
        HEADER
        + row.format(k=0, m="<ARG0>Rain</ARG0> <SIG0>caused</SIG0> <ARG1>floods</ARG1> , closing roads")
        + row.format(k=1, m="Rain caused <ARG0>floods</ARG0> , <SIG0>closing</SIG0> <ARG1>roads</ARG1>"),
    )
    (sentence,) = read_training_file(path)
    spans = [(sentence.text[slice(*p.cause)], sentence.text[slice(*p.effect)]) for p in sentence.pairs]
    assert spans == [("Rain", "floods"), ("floods", "roads")]
    assert sentence.has_signals


def test_csv_wrong_columns_names_file_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", "sentence,label\nRain caused floods,1\n")
    with pytest.raises(InputError, match=r"bad\.csv:1: .*no column 'text_w_pairs'"):
        read_training_file(path)


def test_csv_missing_markup_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", "text_w_pairs\n<ARG0>Rain</ARG0> caused <ARG1>floods</ARG1>\nRain again\n")
    with pytest.raises(InputError, match=r"bad\.csv:3: no <ARG0>"):
        read_training_file(path)


def test_csv_broken_markup_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.csv", "text_w_pairs\n<ARG0>Rain caused <ARG1>floods</ARG1>\n")
    with pytest.raises(InputError, match=r"bad\.csv:2: bad markup .*never closed"):
        read_training_file(path)


def test_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    path = write(tmp_path, "empty.csv", "")
    with pytest.raises(InputError, match=r"empty\.csv"):
        read_training_file(path)
    header_only = write(tmp_path, "header.csv", "text_w_pairs\n")
    with pytest.raises(InputError, match="holds no sentences"):
        read_training_file(header_only)


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"suffix '\.txt'"):
        read_training_file(write(tmp_path, "x.txt", "hi"))
    with pytest.raises(InputError, match="does not exist"):
        read_training_file(tmp_path / "nope.csv")


# ----------------------------------------------------------------- JSONL reader


def test_jsonl_pairs_and_negatives(tmp_path: Path) -> None:
    lines = [
        {"text": "Drought cut yields, and prices rose.", "pairs": [
            {"cause": "Drought", "effect": "yields", "signal": "cut"},
            {"cause": "Drought cut yields", "effect": "prices rose", "signal": "and"},
        ]},
        {"text": "The sky is blue.", "pairs": []},
    ]
    path = write(tmp_path, "d.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    first, second = read_training_file(path)
    assert [first.text[slice(*p.effect)] for p in first.pairs] == ["yields", "prices rose"]
    assert second.pairs == [] and second.source.endswith("d.jsonl:2")


def test_jsonl_line_separator_inside_a_string_is_not_a_line_break(tmp_path: Path) -> None:
    record = {"text": "Rain\u2028fell, so roads flooded.", "pairs": [{"cause": "Rain", "effect": "roads flooded"}]}
    path = write(tmp_path, "d.jsonl", json.dumps(record, ensure_ascii=False) + "\n")
    (sentence,) = read_training_file(path)
    assert sentence.pairs[0].signals == ()


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("{not json", r"d\.jsonl:2: not valid JSON"),
        ('{"pairs": []}', r'd\.jsonl:2: expected an object with a "text"'),
        ('{"text": "Rain fell.", "pairs": [{"cause": "snow", "effect": "fell"}]}', r"d\.jsonl:2: the cause 'snow' does not occur"),
        ('{"text": "Rain fell.", "pairs": [{"cause": "", "effect": "fell"}]}', r"d\.jsonl:2: pair cause=''"),
        ('{"text": "Rain fell.", "pairs": {"cause": "Rain"}}', r'"pairs" must be a list'),
    ],
)
def test_jsonl_bad_lines_name_file_and_line(tmp_path: Path, line: str, match: str) -> None:
    good = '{"text": "Rain fell.", "pairs": []}'
    path = write(tmp_path, "d.jsonl", good + "\n" + line + "\n")
    with pytest.raises(InputError, match=match):
        read_training_files([path])


def test_split_by_group_keeps_documents_whole() -> None:
    from sarg_integrations.extraction.tagger_data import TaggedSentence

    sentences = [TaggedSentence(text=str(i), group=f"doc{i // 3}") for i in range(60)]
    train, held = split_by_group(sentences, 0.25, seed=3)
    assert {s.group for s in train}.isdisjoint({s.group for s in held})
    assert len(held) == 15 and len(train) == 45


def test_balance_negatives_caps_per_corpus() -> None:
    from sarg_integrations.extraction.tagger_data import SpanPair, TaggedSentence

    pos = [TaggedSentence("p", pairs=[SpanPair((0, 1), (2, 3))], corpus="a")] * 4
    neg = [TaggedSentence(f"n{i}", corpus="a") for i in range(20)]
    only_neg = [TaggedSentence(f"m{i}", corpus="b") for i in range(5)]
    kept = balance_negatives(pos + neg + only_neg, 0.5)
    assert sum(1 for s in kept if s.corpus == "a" and not s.pairs) == 2
    assert sum(1 for s in kept if s.corpus == "b") == 5


# ----------------------------------------------------------------- decoding


def test_bio_spans_matches_a_brute_force_reading() -> None:
    import random

    rng = random.Random(7)
    labels = ["O", "B-CAUSE", "I-CAUSE", "B-EFFECT", "I-EFFECT"]
    for _ in range(300):
        seq = [rng.choice(labels) for _ in range(rng.randint(0, 12))]
        scores = [1.0] * len(seq)
        got = {(k, s, e) for k, items in bio_spans(seq, scores).items() for s, e, _ in items}
        # Brute force: a span is a maximal run that starts at B-X, or at I-X not after X.
        want = set()
        i = 0
        while i < len(seq):
            tag, _, kind = seq[i].partition("-")
            if tag == "O":
                i += 1
                continue
            j = i + 1
            while j < len(seq) and seq[j] == f"I-{kind}":
                j += 1
            want.add((kind, i, j))
            i = j
        assert got == want, seq


def test_widen_to_words() -> None:
    assert widen_to_words("over-use of drugs", 5, 8) == (5, 8)
    assert widen_to_words("antibiotics", 2, 4) == (0, 11)


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("Rain fell. Roads flooded.", ["Rain fell.", "Roads flooded."]),
        ("The U.S. economy grew. Jobs rose.", ["The U.S. economy grew.", "Jobs rose."]),
        ("Mr. Smith resigned.\nShares fell", ["Mr. Smith resigned.", "Shares fell"]),
        ("It rose 3.5 percent. Then it fell.", ["It rose 3.5 percent.", "Then it fell."]),
        # A month's abbreviation before a day does not end the sentence.
        ("A blast on Oct. 24 left 11 miners dead. Rescue began.",
         ["A blast on Oct. 24 left 11 miners dead.", "Rescue began."]),
        ("Sen. Lugar and Gov. Bush met. They agreed.", ["Sen. Lugar and Gov. Bush met.", "They agreed."]),
        # A closing quote or bracket stays with its sentence.
        ('He said "we won." Crowds cheered.', ['He said "we won."', "Crowds cheered."]),
        ("It fell (by 3 percent.) Then it rose.", ["It fell (by 3 percent.)", "Then it rose."]),
        # A line break ends a sentence even after an abbreviation.
        ("Buyers include Nissan Motor Co. Ltd.\nFord followed.",
         ["Buyers include Nissan Motor Co. Ltd.", "Ford followed."]),
        ("   ", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert [text[s:e] for s, e in split_sentences(text)] == sentences


@pytest.mark.parametrize(
    ("signal", "rtype"),
    [
        ("caused", RelationType.CAUSAL),
        ("lengthened", RelationType.CAUSAL),
        ("in the wake of", RelationType.CAUSAL),
        ("blocked", RelationType.PREVENTING),
        ("starved", RelationType.PREVENTING),
        ("allowed", RelationType.ENABLING),
        ("if", RelationType.CONDITIONAL),
        ("after", RelationType.TEMPORAL),
        ("in order to", RelationType.PROCEDURAL),
        ("to", RelationType.PROCEDURAL),
        ("toppled", RelationType.CAUSAL),
    ],
)
def test_relation_type_for(signal: str, rtype: RelationType) -> None:
    assert relation_type_for(signal) is rtype


def test_relation_label_reads_effect_first_signals_forward() -> None:
    assert relation_label("because of", True) == "causes"
    assert relation_label("was caused by", True) == "causes"
    assert relation_label("after", True) == "precedes"
    assert relation_label("Pushed  Up", False) == "pushed up"
    assert relation_label(None, True) == "causes"


# ----------------------------------------------------------------- config, choice, union


def test_tagger_config_rejects_wrong_files(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match=r"tagger\.json is missing"):
        TaggerConfig.read(tmp_path / "tagger.json")
    bad = write(tmp_path, "tagger.json", "{not json")
    with pytest.raises(ModelLoadError, match="not a readable JSON"):
        TaggerConfig.read(bad)
    good = TaggerConfig(rank=4, alpha=8).to_json()
    for change, match in [({"format": "x"}, "not a sarg-span-tagger"), ({"version": 9}, "version 9"),
                          ({"rank": 0}, "out-of-range"), ({"signal_labels": ["O"]}, "other labels"),
                          ({"rank": "x"}, "mistypes")]:
        write(tmp_path, "tagger.json", json.dumps({**good, **change}))
        with pytest.raises(ModelLoadError, match=match):
            TaggerConfig.read(tmp_path / "tagger.json")


def test_extractor_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match="batch_size=0"):
        TaggerExtractor(batch_size=0)
    with pytest.raises(ConfigError, match="max_sentence_chars=5"):
        TaggerExtractor(max_sentence_chars=5)


def test_resolve_extractor(tmp_path: Path) -> None:
    assert type(resolve_extractor("rules")).__name__ == "RuleBasedExtractor"
    assert type(resolve_extractor("tagger")).__name__ == "TaggerExtractor"
    assert type(resolve_extractor("union")).__name__ == "UnionExtractor"
    default = default_extractor()
    assert (type(default.primary).__name__, type(default.secondary).__name__) == (
        "TaggerExtractor", "RuleBasedExtractor"
    )
    assert type(default_extractor("generic_spo")).__name__ == "RuleBasedExtractor"
    (tmp_path / "tagger.json").write_text("{}")
    assert resolve_extractor(str(tmp_path)).model_dir == tmp_path
    with pytest.raises(ConfigError, match="extractor='nope' is neither"):
        resolve_extractor("nope")
    with pytest.raises(ConfigError, match="reasoning schema only"):
        resolve_extractor("tagger", schema="generic_spo")


def test_union_adds_only_relations_the_primary_missed() -> None:
    s = "Rain caused floods, which closed roads."

    class Fixed:
        def __init__(self, *triples):
            self.triples = list(triples)

        def extract(self, document):
            return self.triples

    tagged = Triple("rain", "caused", "floods", document_id="d", sentence=s, sentence_span=(0, len(s)),
                    cause_text="Rain", effect_text="floods")
    same = Triple("rain", "causes", "floods", document_id="d", sentence=s, sentence_span=(0, len(s)))
    new = Triple("floods", "closed", "roads", document_id="d", sentence=s, sentence_span=(0, len(s)))
    assert same_relation(tagged, same) and not same_relation(tagged, new)
    got = UnionExtractor(Fixed(tagged), Fixed(same, new)).extract(SourceDocument("d", s))
    assert got == [tagged, new]


def test_relation_type_needs_the_whole_signal_for_bare_to() -> None:
    assert relation_type_for("led to") is RelationType.CAUSAL
    assert relation_type_for("to") is RelationType.PROCEDURAL


def test_pipeline_takes_an_extractor_name() -> None:
    from fakes import FixedKeyphrases, HashingEmbedder

    from sarg_integrations import CueWordDirectionClassifier, SARGConfig, SARGPipeline

    def make(**kwargs):
        return SARGPipeline(
            kwargs.pop("config", SARGConfig()),
            embedder=HashingEmbedder(),
            keyphrase_extractor=FixedKeyphrases("rain"),
            direction_classifier=CueWordDirectionClassifier(),
            **kwargs,
        )

    assert type(make().extractor).__name__ == "UnionExtractor"  # the default: tagger + rules
    assert type(make(extractor="rules").extractor).__name__ == "RuleBasedExtractor"
    ablation = make(config=SARGConfig(schema="generic_spo"))
    assert type(ablation.extractor).__name__ == "RuleBasedExtractor"
    with pytest.raises(ConfigError, match="extractor='nope'"):
        make(extractor="nope")
