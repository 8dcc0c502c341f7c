"""Tests of sarg_integrations.io: loading documents from files, folders and JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sarg_integrations.errors import DocumentLoadError, InputError
from sarg_integrations.io import (
    DEMO_QUESTIONS,
    SUPPORTED_EXTENSIONS,
    demo_questions,
    load_demo_corpus,
    load_documents,
)
from sarg_integrations.schema import SourceDocument


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def write_jsonl(path: Path, records: list) -> Path:
    return write(path, "\n".join(json.dumps(r) for r in records) + "\n")


# --------------------------------------------------------------------------- text files


def test_txt_and_md_files_become_one_document_each(tmp_path: Path) -> None:
    a = write(tmp_path / "rain.txt", "Rain causes floods.")
    b = write(tmp_path / "notes.md", "# Notes\nFloods cause damage.")
    docs = load_documents([a, str(b)])
    assert [d.id for d in docs] == ["rain", "notes"]
    assert docs[0] == SourceDocument("rain", "Rain causes floods.", {"source": str(a)})
    assert docs[1].text == "# Notes\nFloods cause damage."
    assert docs[1].metadata == {"source": str(b)}


def test_single_path_is_accepted(tmp_path: Path) -> None:
    a = write(tmp_path / "rain.txt", "Rain causes floods.")
    assert [d.id for d in load_documents(a)] == ["rain"]


def test_extension_is_case_insensitive(tmp_path: Path) -> None:
    a = write(tmp_path / "LOUD.TXT", "x")
    assert load_documents([a])[0].id == "LOUD"


def test_utf8_bom_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbfCaf\xc3\xa9 causes joy.")
    assert load_documents([path])[0].text == "Café causes joy."


def test_bom_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"id": "a", "text": "t"}\n')
    assert [(d.id, d.text) for d in load_documents([path])] == [("a", "t")]


def test_empty_text_file_is_loaded(tmp_path: Path) -> None:
    # The pipeline reports empty documents as skipped; loading must not fail.
    docs = load_documents([write(tmp_path / "empty.txt", "")])
    assert docs[0].text == ""


# --------------------------------------------------------------------------- folders


def test_folder_is_read_recursively_in_relative_path_order(tmp_path: Path) -> None:
    write(tmp_path / "b.txt", "B")
    write(tmp_path / "a.md", "A")
    write(tmp_path / "sub" / "c.txt", "C")
    write_jsonl(tmp_path / "sub" / "recs.jsonl", [{"id": "r1", "text": "R"}])
    write(tmp_path / "ignored.pdf", "not a text file")
    write(tmp_path / ".hidden.txt", "hidden")
    write(tmp_path / ".git" / "x.txt", "hidden folder")
    docs = load_documents([tmp_path])
    assert [d.id for d in docs] == ["a", "b", "sub/c", "r1"]
    assert [d.text for d in docs] == ["A", "B", "C", "R"]
    assert docs[2].metadata["source"] == str(tmp_path / "sub" / "c.txt")


def test_folder_order_is_deterministic(tmp_path: Path) -> None:
    for name in ["z", "m", "a", "q"]:
        write(tmp_path / f"{name}.txt", name)
    assert [d.id for d in load_documents([tmp_path])] == ["a", "m", "q", "z"]


def test_same_file_twice_is_loaded_once(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", "A")
    docs = load_documents([tmp_path, a])
    assert [d.id for d in docs] == ["a"]


def test_folder_without_supported_files(tmp_path: Path) -> None:
    write(tmp_path / "paper.pdf", "x")
    with pytest.raises(DocumentLoadError) as info:
        load_documents([tmp_path])
    err = info.value
    assert err.path == str(tmp_path)
    assert err.line is None
    assert str(tmp_path) in str(err)
    assert "no supported files" in str(err)
    assert ".txt" in str(err) and ".jsonl" in str(err)
    assert "paper.pdf" in str(err)


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(DocumentLoadError, match="empty"):
        load_documents([tmp_path])


def test_folder_with_only_hidden_files(tmp_path: Path) -> None:
    write(tmp_path / ".secret.txt", "x")
    with pytest.raises(DocumentLoadError, match="no supported files"):
        load_documents([tmp_path])


# --------------------------------------------------------------------------- JSONL


def test_jsonl_records(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": "d1", "text": "Rain causes floods.", "title": "Rain"}\n'
        "\n"
        '   \n'
        '{"text": "Floods cause damage.", "metadata": {"year": 2020}}\n'
        '{"id": 7, "text": "seven"}\n',
        encoding="utf-8",
    )
    docs = load_documents([path])
    assert [d.id for d in docs] == ["d1", "docs-4", "7"]
    assert docs[0].metadata == {"title": "Rain", "source": str(path)}
    assert docs[1].metadata == {"year": 2020, "source": str(path)}
    assert docs[1].text == "Floods cause damage."


def test_jsonl_source_key_is_kept(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": "t", "source": "web"}])
    assert load_documents([path])[0].metadata["source"] == "web"


def test_invalid_json_names_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", '{"id": "a", "text": "ok"}\n\n{"id": "b", "text": oops}\n')
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    err = info.value
    assert err.path == str(path)
    assert err.line == 3
    message = str(err)
    assert str(path) in message
    assert "line 3" in message
    assert "invalid JSON" in message
    assert "oops" in message
    assert '"text"' in message  # says what a line should look like


def test_jsonl_line_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path / "list.jsonl", '["a", "b"]\n')
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    assert info.value.line == 1
    assert "expected a JSON object" in str(info.value)
    assert "array" in str(info.value)


def test_jsonl_missing_text(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": "x"}, {"id": "b", "body": "x"}])
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    assert info.value.line == 2
    assert info.value.path == str(path)
    assert 'no "text" key' in str(info.value)
    assert "body" in str(info.value)


@pytest.mark.parametrize(("value", "kind"), [(42, "number"), (None, "null"), (["a"], "array")])
def test_jsonl_non_string_text(tmp_path: Path, value: object, kind: str) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "text": value}])
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    assert info.value.line == 1
    assert '"text" must be a string' in str(info.value)
    assert kind in str(info.value)


@pytest.mark.parametrize("bad_id", ["", ["x"], True])
def test_jsonl_bad_id(tmp_path: Path, bad_id: object) -> None:
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": bad_id, "text": "t"}])
    with pytest.raises(DocumentLoadError, match='"id" must be') as info:
        load_documents([path])
    assert info.value.line == 1


def test_jsonl_with_no_records(tmp_path: Path) -> None:
    path = write(tmp_path / "blank.jsonl", "\n  \n")
    with pytest.raises(DocumentLoadError, match="no records") as info:
        load_documents([path])
    assert info.value.path == str(path)


# --------------------------------------------------------------------------- path errors


def test_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(DocumentLoadError) as info:
        load_documents([missing])
    assert info.value.path == str(missing)
    assert "does not exist" in str(info.value)
    assert isinstance(info.value, InputError)
    assert isinstance(info.value, ValueError)


def test_unsupported_extension(tmp_path: Path) -> None:
    path = write(tmp_path / "paper.pdf", "x")
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    message = str(info.value)
    assert info.value.path == str(path)
    assert "'.pdf'" in message
    for ext in SUPPORTED_EXTENSIONS:
        assert ext in message


def test_file_without_extension(tmp_path: Path) -> None:
    path = write(tmp_path / "README", "x")
    with pytest.raises(DocumentLoadError, match="unsupported extension"):
        load_documents([path])


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("Café\nrésumé".encode("latin-1"))
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    message = str(info.value)
    assert info.value.path == str(path)
    assert info.value.line == 1
    assert "not valid UTF-8" in message
    assert "byte offset 3" in message
    assert "0xe9" in message
    assert "iconv" in message


def test_non_utf8_offset_counts_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"text": "a"}\n{"text": "\xff"}\n')
    with pytest.raises(DocumentLoadError) as info:
        load_documents([path])
    assert "byte offset 27" in str(info.value)
    assert info.value.line == 2


def test_empty_path_list() -> None:
    with pytest.raises(InputError, match="no document paths"):
        load_documents([])


# --------------------------------------------------------------------------- duplicate ids


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    a = write(tmp_path / "one" / "rain.txt", "A")
    b = write(tmp_path / "two" / "rain.md", "B")
    with pytest.raises(DocumentLoadError) as info:
        load_documents([a, b])
    message = str(info.value)
    assert "'rain'" in message
    assert str(a) in message and str(b) in message
    assert info.value.path == str(b)


def test_duplicate_ids_between_text_and_jsonl(tmp_path: Path) -> None:
    a = write(tmp_path / "rain.txt", "A")
    records = [{"id": "x", "text": "x"}, {"id": "rain", "text": "B"}]
    j = write_jsonl(tmp_path / "recs.jsonl", records)
    with pytest.raises(DocumentLoadError) as info:
        load_documents([a, j])
    message = str(info.value)
    assert str(a) in message
    assert f"{j}, line 2" in message


def test_duplicate_ids_within_jsonl(tmp_path: Path) -> None:
    j = write_jsonl(tmp_path / "recs.jsonl", [{"id": "x", "text": "1"}, {"id": "x", "text": "2"}])
    with pytest.raises(DocumentLoadError, match="line 1 and .*line 2"):
        load_documents([j])


# --------------------------------------------------------------------------- demo


def test_demo_questions() -> None:
    assert DEMO_QUESTIONS[0] == "What does a mutation in the GBA1 gene ultimately lead to?"
    assert DEMO_QUESTIONS[1] == "Why did technology stocks sell off?"
    questions = demo_questions()
    assert questions == DEMO_QUESTIONS
    questions.append("mutated")
    assert "mutated" not in DEMO_QUESTIONS


def test_demo_corpus_loads() -> None:
    from importlib import resources

    if not resources.files("sarg_integrations").joinpath("data/demo_corpus.jsonl").is_file():
        pytest.skip("the demo corpus is not in this checkout yet")
    docs = load_demo_corpus()
    assert docs
    assert len({d.id for d in docs}) == len(docs)
    assert all(isinstance(d.text, str) and d.text.strip() for d in docs)
