"""Intent classifier: batching tokenized utterances fails.

Padding is supposed to happen in `collate`, but `pad_to` comes from the config
and is None unless `--pad-to` is given, which the README example leaves out.

    python intents.py --batch-size 4
"""
import argparse
import collections
import logging
import re
import string

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("intents")

UTTERANCES = [
    ("turn the lights off in the kitchen", "lights"),
    ("play something relaxing", "music"),
    ("what's the weather like tomorrow morning", "weather"),
    ("set an alarm for seven", "alarm"),
    ("dim the lights", "lights"),
    ("skip this song", "music"),
    ("will it rain", "weather"),
    ("wake me up at six thirty please", "alarm"),
]


class Tokenizer:
    PAD, UNK = "<pad>", "<unk>"

    def __init__(self, lowercase=True, min_count=1):
        self.lowercase = lowercase
        self.min_count = min_count
        self.vocab = {self.PAD: 0, self.UNK: 1}

    def words(self, text):
        if self.lowercase:
            text = text.lower()
        text = text.translate(str.maketrans("", "", string.punctuation.replace("'", "")))
        return re.findall(r"[\w']+", text)

    def fit(self, texts):
        counts = collections.Counter(w for t in texts for w in self.words(t))
        for word, n in counts.most_common():
            if n >= self.min_count:
                self.vocab.setdefault(word, len(self.vocab))
        return self

    def encode(self, text):
        return [self.vocab.get(w, self.vocab[self.UNK]) for w in self.words(text)]


def collate(encoded, pad_to=None):
    if pad_to is not None:
        encoded = [ids[:pad_to] + [0] * (pad_to - len(ids[:pad_to])) for ids in encoded]
    return torch.tensor(encoded, dtype=torch.long)


class BagOfEmbeddings(nn.Module):
    def __init__(self, vocab_size, dim, classes):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean", padding_idx=0)
        self.out = nn.Linear(dim, classes)

    def forward(self, ids):
        return self.out(self.embed(ids))


def batches(items, size):
    for i in range(0, len(items), size):
        yield items[i:i + size]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--pad-to", type=int, default=None)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()

    tok = Tokenizer().fit(t for t, _ in UTTERANCES)
    labels = sorted({label for _, label in UTTERANCES})
    log.info("vocab %d words, %d intents", len(tok.vocab), len(labels))
    model = BagOfEmbeddings(len(tok.vocab), args.dim, len(labels))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for chunk in batches(UTTERANCES, args.batch_size):
            ids = collate([tok.encode(t) for t, _ in chunk], args.pad_to)
            target = torch.tensor([labels.index(label) for _, label in chunk])
            loss = nn.functional.cross_entropy(model(ids), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        log.info("epoch %d loss %.3f", epoch, loss.item())


if __name__ == "__main__":
    main()
