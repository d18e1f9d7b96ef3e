"""Script format, tokenizers, and the whole command: Parquet shards, Dataset, PNG."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from egomem.cli.main import main
from egomem.errors import InputError
from egomem_training.data.audio_tokens import LogMelFrameTokenizer, make_audio_tokenizer, mimi_status
from egomem_training.data.dataset import IGNORE, StreamSamples
from egomem_training.data.layout import DIALOG_START, LEVEL2_SLOT
from egomem_training.data.script import load_script
from egomem_training.data.text_tokens import ANSWER, PAD, RETR, ByteTokenizer, HFTokenizer, WordTokenizer

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "data" / "example_script.json"


def test_jsonl_script_equals_json(tmp_path: Path) -> None:
    script = load_script(EXAMPLE)
    lines = [json.dumps({"user": u.model_dump()}) for u in script.users]
    lines += [json.dumps({"session": s.model_dump()}) for s in script.sessions]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    assert load_script(tmp_path / "s.jsonl") == script


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"level": 2}, "level-2 turn needs"),
        ({"facts": ["x"]}, "level-2 turns only"),
        ({"speaker": "x"}, "Extra inputs"),
    ],
)
def test_invalid_scripts_are_one_line_errors(tmp_path: Path, patch: dict[str, object], message: str) -> None:
    raw = json.loads(EXAMPLE.read_text())
    raw["sessions"][0]["turns"][0].update(patch)
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(InputError, match=message):
        load_script(tmp_path / "bad.json")


def test_text_tokenizers_keep_the_query_frame(tmp_path: Path) -> None:
    q = f"{RETR}:\nson\ntraining marathon{ANSWER}"
    words = WordTokenizer.from_texts(["son training marathon :"])
    ids = words.encode(q)
    assert ids[0] == words.id_of(RETR) and ids[-1] == words.id_of(ANSWER)
    assert [words.vocab[i] for i in ids[1:-1]] == [":", "\n", "son", "\n", "training", "marathon"]
    by = ByteTokenizer()
    assert by.encode(q)[0] == by.id_of(RETR) and len(by.encode("ab")) == 2
    from tokenizers import Tokenizer, models, pre_tokenizers

    hf = Tokenizer(models.WordLevel({"son": 0, "[UNK]": 1}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.save(str(tmp_path / "tok.json"))
    tok = HFTokenizer(tmp_path / "tok.json")
    got = tok.encode(f"{RETR}son{ANSWER}")
    assert got == [tok.id_of(RETR), 0, tok.id_of(ANSWER)] and len({tok.id_of(s) for s in (PAD, RETR, ANSWER)}) == 3


def test_logmel_codes_one_row_per_step() -> None:
    tok = LogMelFrameTokenizer()
    rng = np.random.default_rng(0)
    silence = np.zeros(16000, dtype=np.float32)
    noise = (0.1 * rng.standard_normal(16000)).astype(np.float32)
    a, b = tok.encode(silence), tok.encode(noise)
    assert a.shape == b.shape == (12, 8)
    assert a.min() >= 0 and b.max() < tok.cardinality
    assert (b[:, 0] > a[:, 0]).all()  # codebook 0 is the level


def test_mimi_is_detected_not_assumed(tmp_path: Path) -> None:
    weights, why = mimi_status(tmp_path / "missing.safetensors")
    assert weights is None and why
    tok, note = make_audio_tokenizer("auto", tmp_path / "missing.safetensors")
    assert tok.name == "logmel" and "Mimi unavailable" in note
    with pytest.raises(InputError, match="Mimi"):
        make_audio_tokenizer("mimi", tmp_path / "missing.safetensors")


def test_build_command_parquet_dataset_and_png(tmp_path: Path) -> None:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    out = tmp_path / "out"
    args = ["data", "build", str(EXAMPLE), "--out", str(out), "--seed", "7", "--shard-size", "1"]
    main([*args, "--sessions-per-stream", "1", "--assistant-voice", "espeak-ng", "--user-engines", "espeak-ng"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["streams"] == 2 and manifest["shards"] == ["00000", "00001"]  # one stream per shard
    assert manifest["samples"] == {"level1": 2, "level2_query": 3, "level2_answer": 3, "trigger": 2}
    assert (out / "stream-000000.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    ds = StreamSamples(out)
    assert len(ds) == sum(manifest["samples"].values())
    pad = ds.pad_id
    streams = {
        r["stream_id"]: r
        for shard in manifest["shards"]
        for r in pq.read_table(out / f"streams-{shard}.parquet").to_pylist()
    }
    for i in range(len(ds)):
        item, row = ds[i], ds.rows[i]
        st = streams[item["stream_id"]]
        d = st["dialog_steps"]
        assert item["text"].shape == (DIALOG_START + d,) and item["listen"].shape == (DIALOG_START + d, 8)
        l1, l2 = row["level1_tokens"], row["level2_tokens"]
        assert item["text"][: len(l1)].tolist() == l1 and (item["text"][len(l1) : LEVEL2_SLOT[0]] == pad).all()
        assert item["text"][LEVEL2_SLOT[0] : LEVEL2_SLOT[0] + len(l2)].tolist() == l2
        assert (item["text"][LEVEL2_SLOT[0] + len(l2) : DIALOG_START] == pad).all()
        assert item["text"][DIALOG_START:].tolist() == st["text"]
        assert (item["listen"][:DIALOG_START] == -1).all() and (item["speak"][DIALOG_START:] >= 0).all()
        assert (item["labels"][:DIALOG_START] == IGNORE).all() and item["labels"][DIALOG_START:].tolist() == st[
            "labels"
        ]
        for key, spans in (("text_mask", "text_spans"), ("speak_mask", "speak_spans"), ("label_mask", "label_spans")):
            m = item[key]
            assert not m[:DIALOG_START].any() and int(m.sum()) == sum(b - a for a, b in row[spans])
        assert item["label_mask"].any() == (item["task"] == "trigger")
        if item["task"] == "level2_answer":
            assert row["level2_text"] and len(l2) > 0
    meta = json.loads(streams["s000000"]["meta"])
    assert meta["seed"] == [7, 0] and set(meta["augmentation"]) >= {"echo", "echo_gain", "echo_delay_s"}


def test_build_refuses_a_used_folder(tmp_path: Path) -> None:
    (tmp_path / "streams-00000.parquet").write_bytes(b"")
    with pytest.raises(SystemExit):
        main(["data", "build", str(EXAMPLE), "--out", str(tmp_path), "--audio-tokenizer", "logmel"])


def test_logmel_chunks_do_not_change_codes() -> None:
    tok = LogMelFrameTokenizer()
    x = (0.1 * np.random.default_rng(5).standard_normal(16000 * 3)).astype(np.float32)
    assert np.allclose(tok.log_mel(x, chunk_steps=7), tok.log_mel(x, chunk_steps=1000), atol=1e-3)  # BLAS order only


@pytest.mark.slow
def test_default_voices_piper_assistant_and_festival_users(tmp_path: Path) -> None:
    from egomem_training.data.build import BuildConfig, build
    from egomem_training.data.script import load_script

    manifest, streams = build(load_script(EXAMPLE), tmp_path / "out", BuildConfig(sessions_per_stream=2), keep=True)
    assert manifest["assistant_voice"] == "piper" and streams[0].meta["assistant_voice"] == "piper"
    if shutil.which("text2wave"):
        assert any(v.startswith("festival:") for v in manifest["voice_pool"])
    assert not any("joe" in v for v in manifest["voice_pool"])  # the assistant's voice is never a user's
