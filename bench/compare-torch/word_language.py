# word_language.py: examples/word-language in PyTorch, the same recipe for comparison: the
# same words (picked by the same seeded hash from the same Debian word lists), the same
# vocabulary and one-hot characters, a packed LSTM (128 hidden) whose last hidden state goes
# through Linear(128, 5), cross_entropy, Adam; the same batch size, learning rate and epochs.
# Only the shuffling order differs (torch's generator, not the engine's). The DataLoader's
# collate_fn pads the batch's words and packs them (enforce_sorted=False), as the example's
# collate does.
# Prints test_accuracy=, train_seconds= (wall) and train_cpu_seconds= (all threads) lines with
# the example's meaning.
# Usage: /usr/bin/python3 bench/compare-torch/word_language.py [--epochs N] [--train-words N]
#        [--test-words N] [--seed S] [--print-words]
# --print-words prints the chosen words as `word-language --print-words` does, and stops.
# GS_TORCH_THREADS=N sets torch.set_num_threads(N) (default 2, the comparison's budget).
import argparse, os, sys, time

LISTS = ['american-english', 'ngerman', 'french', 'spanish', 'italian']
DICT = '/usr/share/dict'
MAX_CHARS, HIDDEN, BATCH, LR = 20, 128, 32, 3e-3
MASK = (1 << 64) - 1

p = argparse.ArgumentParser()
p.add_argument('--epochs', type=int, default=4)
p.add_argument('--train-words', type=int, default=4000)
p.add_argument('--test-words', type=int, default=1000)
p.add_argument('--seed', type=int, default=17)
p.add_argument('--print-words', action='store_true')
args = p.parse_args()

def usable(word):
    """The example's filter: 2..MAX_CHARS characters, no ASCII byte that is not a letter
    (apostrophes, hyphens, digits, dots)."""
    if not 2 <= len(word) <= MAX_CHARS:
        return False
    return all(not (ord(c) < 128 and not c.isalpha()) for c in word)

def rank(word, seed):
    """FNV-1a 64 over the word's UTF-8 bytes, from the offset basis xor the seed: the
    example's word_rank."""
    h = 14695981039346656037 ^ seed
    for b in word.encode('utf-8'):
        h = ((h ^ b) * 1099511628211) & MASK
    return h

def pick_words():
    words = []
    for path in LISTS:
        with open(os.path.join(DICT, path), encoding='utf-8') as f:
            words.append({w for w in f.read().split('\n') if usable(w)})
    seen = {}
    for lang, ws in enumerate(words):
        for w in ws:
            seen[w] = seen.get(w, 0) + 1
    train, test = [], []
    for lang, ws in enumerate(words):
        # A word in two lists has no single answer: left out of both.
        own = sorted((w for w in ws if seen[w] == 1), key=lambda w: (rank(w, args.seed), w.encode()))
        if len(own) < args.train_words + args.test_words:
            sys.exit(f'word_language.py: {LISTS[lang]} has {len(own)} usable words')
        train += [(w, lang) for w in own[:args.train_words]]
        test += [(w, lang) for w in own[args.train_words:args.train_words + args.test_words]]
    return train, test

train, test = pick_words()
if args.print_words:
    for split, words in (('train', train), ('test', test)):
        for w, lang in words:
            print(f'{split} {lang} {w}')
    sys.exit(0)

import torch  # only for training: the split above needs none
torch.set_num_threads(int(os.environ.get('GS_TORCH_THREADS') or 2))
torch.manual_seed(args.seed)
# Vocabulary: the training words' characters in code-point order; 0 stands for any other.
chars = sorted({c for w, _ in train for c in w})
index = {c: i + 1 for i, c in enumerate(chars)}
VOCAB = len(chars) + 1

def collate(batch):
    """Pads the batch's words as one-hot rows [T, B, VOCAB] and packs them."""
    lengths = torch.tensor([len(w) for w, _ in batch])
    x = torch.zeros(int(lengths.max()), len(batch), VOCAB)
    for b, (w, _) in enumerate(batch):
        for t, c in enumerate(w):
            x[t, b, index.get(c, 0)] = 1
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    return packed, torch.tensor([lang for _, lang in batch])

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(VOCAB, HIDDEN)
        self.fc = torch.nn.Linear(HIDDEN, len(LISTS))

    def forward(self, packed):
        _, (h_n, _) = self.lstm(packed)
        return self.fc(h_n[-1])

net = Net()
opt = torch.optim.Adam(net.parameters(), lr=LR)
loader = torch.utils.data.DataLoader(train, batch_size=BATCH, shuffle=True, collate_fn=collate,
                                     generator=torch.Generator().manual_seed(args.seed))

def accuracy(words):
    hits = 0
    with torch.no_grad():
        for i in range(0, len(words), 500):
            packed, y = collate(words[i:i + 500])
            hits += int((net(packed).argmax(1) == y).sum())
    return hits / len(words)

print(f'# torch {torch.__version__}, {torch.get_num_threads()} threads; {len(train)} training '
      f'and {len(test)} test words, {VOCAB - 1} characters', flush=True)
start, cpu_start = time.perf_counter(), time.process_time()
for epoch in range(1, args.epochs + 1):
    loss_sum, steps = 0.0, 0
    for packed, y in loader:
        loss = torch.nn.functional.cross_entropy(net(packed), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_sum += loss.item()
        steps += 1
    print(f'epoch {epoch}  loss {loss_sum / steps:.4f}', flush=True)
seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
print(f'test_accuracy={accuracy(test):.4f}')
print(f'train_seconds={seconds:.3f}')
print(f'train_cpu_seconds={cpu_seconds:.3f}')
