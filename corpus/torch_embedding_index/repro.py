"""Text classifier: IndexError during the first batch after adding new reviews to the corpus."""
import argparse
import collections
import logging
import random
import re

import torch
import torch.nn as nn

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("textcls")

REVIEWS = [
    ("the battery lasts all day and the screen is bright", 1),
    ("stopped charging after a week, very disappointed", 0),
    ("great value for the price", 1),
    ("the speaker crackles at high volume", 0),
    ("fast shipping, works as described", 1),
    ("customer support never answered my emails", 0),
]

NEW_REVIEWS = [
    ("absolutely phenomenal craftsmanship", 1),
    ("flimsy hinge snapped immediately", 0),
]

PAD, UNK = "<pad>", "<unk>"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--embed-dim", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--max-len", type=int, default=16)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()


def tokenize(text):
    return re.findall(r"[a-z']+", text.lower())


class Vocab:
    def __init__(self, texts, min_freq=1):
        counts = collections.Counter(tok for t in texts for tok in tokenize(t))
        self.itos = [PAD, UNK] + sorted(w for w, c in counts.items() if c >= min_freq)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def add(self, texts):
        # New words get ids, but the model's embedding table was already built.
        for t in texts:
            for tok in tokenize(t):
                if tok not in self.stoi:
                    self.stoi[tok] = len(self.itos)
                    self.itos.append(tok)

    def encode(self, text, max_len):
        ids = [self.stoi.get(tok, self.stoi[UNK]) for tok in tokenize(text)][:max_len]
        return ids + [self.stoi[PAD]] * (max_len - len(ids))


class Classifier(nn.Module):
    def __init__(self, vocab_size, embed_dim, hidden, num_classes=2):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=0)
        self.encoder = nn.GRU(embed_dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, num_classes)

    def forward(self, ids):
        emb = self.embed(ids)
        _, h = self.encoder(emb)
        return self.out(h[-1])


def batches(data, vocab, max_len, size=4):
    random.shuffle(data)
    for i in range(0, len(data), size):
        chunk = data[i : i + size]
        ids = torch.tensor([vocab.encode(t, max_len) for t, _ in chunk])
        labels = torch.tensor([y for _, y in chunk])
        yield ids, labels


def main():
    args = parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    vocab = Vocab([t for t, _ in REVIEWS])
    model = Classifier(len(vocab), args.embed_dim, args.hidden).to(device)
    vocab.add([t for t, _ in NEW_REVIEWS])
    log.info("vocab size %d", len(vocab))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for ids, labels in batches(NEW_REVIEWS + REVIEWS, vocab, args.max_len):
        logits = model(ids.to(device))
        loss = loss_fn(logits, labels.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("loss %.4f", loss.item())


if __name__ == "__main__":
    main()
