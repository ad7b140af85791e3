"""Embedders: the local model from site-packages, an OpenAI-compatible endpoint on loopback, the fake."""

import socket

import numpy as np
import pytest
from fakeembed import EmbeddingsAPI

from memdir.search.embed import (
    Embedder,
    EmbeddingError,
    LocalEmbedder,
    MultilingualEmbedder,
    OpenAIEmbedder,
    available,
    multilingual_available,
)
from memdir.testing import FakeEmbedder


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    return LocalEmbedder()


def test_the_local_model_ships_in_the_package_and_ranks_paraphrases_first(local: LocalEmbedder) -> None:
    assert available() and isinstance(local, Embedder)
    v = local.embed(["A dog runs in the park.", "A puppy is playing outside.", "The quarterly tax filing is due."])
    assert v.shape == (3, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_the_local_model_gives_the_same_vector_alone_or_in_a_batch(local: LocalEmbedder) -> None:
    texts = ["short", "a much longer sentence about gardening in the spring", "middle length text"]
    batch = local.embed(texts)
    for i, text in enumerate(texts):
        assert np.allclose(local.embed([text])[0], batch[i], atol=1e-4)


def test_the_local_tokenizer_is_bert_uncased_and_cuts_long_text(local: LocalEmbedder) -> None:
    assert local.ids("Hello world") == [101, 7592, 2088, 102]
    assert len(local.ids("word " * 1000)) == local.max_tokens
    assert local.embed([]).shape == (0, 384)


def test_the_multilingual_model_finds_a_note_from_a_question_in_another_language() -> None:
    use = MultilingualEmbedder()
    assert multilingual_available() and isinstance(use, Embedder)
    notes = ["Kitchen: we picked white quartz countertops in March.", "Dentist: Dr. Kim, cleaning every six months.",
             "Deploys go out with make release, never on Fridays."]
    questions = ["我们厨房选了什么台面？", "치과 검진은 얼마나 자주 가요?", "本番へのデプロイはいつ禁止？"]
    v = use.embed(notes + questions + ["", "   "])
    assert v.shape == (8, 512) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)  # an empty text is embedded, not a zero row
    sims = v[3:6] @ v[:3].T
    assert [int(row.argmax()) for row in sims] == [0, 1, 2]
    assert np.allclose(use.embed([notes[1]])[0], v[1], atol=1e-4)  # alone or in a batch, the same vector


def test_an_openai_compatible_endpoint_is_called_in_batches_with_the_key() -> None:
    with EmbeddingsAPI(dim=32) as api:
        emb = OpenAIEmbedder(api.url, "nomic-embed-text", api_key="sk-test", batch=2)
        v = emb.embed(["red apple", "green pear", "red apple pie"])
    assert v.shape == (3, 32) and emb.dim == 32
    assert np.allclose(v, FakeEmbedder(32).embed(["red apple", "green pear", "red apple pie"]), atol=1e-6)
    assert [r["body"]["input"] for r in api.requests] == [["red apple", "green pear"], ["red apple pie"]]
    assert {r["body"]["model"] for r in api.requests} == {"nomic-embed-text"}
    assert api.requests[0]["headers"]["authorization"] == "Bearer sk-test"
    assert api.requests[0]["path"] == "/v1/embeddings"


def test_an_endpoint_that_refuses_or_is_down_gives_one_clear_error() -> None:
    with EmbeddingsAPI() as api:
        api.status = 401
        with pytest.raises(EmbeddingError, match=r"HTTP 401: .*invalid api key.*check the URL, model and key"):
            OpenAIEmbedder(api.url, "m").embed(["x"])
        api.status, api.reply = 200, {"object": "list", "data": [{"index": 0}]}
        with pytest.raises(EmbeddingError, match="without data\\[\\].embedding"):
            OpenAIEmbedder(api.url, "m").embed(["x"])
        api.reply = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}
        with pytest.raises(EmbeddingError, match="2 dimensions .* expected 8"):
            OpenAIEmbedder(api.url, "m", dim=8).embed(["x"])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(EmbeddingError, match="cannot reach the embedding endpoint .* is the server running"):
        OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=2).embed(["x"])
    with pytest.raises(EmbeddingError, match="not an http"):
        OpenAIEmbedder("localhost:11434", "m")


def test_the_fake_embedder_is_deterministic_and_words_in_common_bring_texts_closer() -> None:
    a, b = FakeEmbedder(), FakeEmbedder()
    v = a.embed(["red apple", "red apple tree", "blue whale"])
    assert np.array_equal(v, b.embed(["red apple", "red apple tree", "blue whale"]))
    assert v[0] @ v[1] > v[0] @ v[2]
    assert a.texts == ["red apple", "red apple tree", "blue whale"]
