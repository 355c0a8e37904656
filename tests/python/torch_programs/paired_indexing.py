# Paired advanced indexing as training code uses it: each row's score for its target class
# (logits[torch.arange(n), target]), a hand-written cross-entropy and margin loss on it,
# scatter-style updates (counts[rows, cols] += 1 through index_put_ with accumulate, a
# confusion matrix), and masked / paired assignment in a model's update step.
import torch

n, classes, features = 8, 4, 5
x = torch.sin(torch.arange(n * features, dtype=torch.float32).reshape(n, features) * 0.7)
target = torch.tensor([0, 3, 1, 1, 2, 0, 3, 2])
w = torch.zeros(features, classes, requires_grad=True)
b = torch.zeros(classes, requires_grad=True)
opt = torch.optim.SGD([w, b], lr=0.5)

rows = torch.arange(n)
for step in range(5):
    logits = x @ w + b
    picked = logits[rows, target]  # the score of each row's own class
    loss = (logits.logsumexp(dim=1) - picked).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step", step, "loss", round(loss.item(), 5), "picked grad fn", picked.grad_fn.name())

with torch.no_grad():
    logits = x @ w + b
    predicted = logits.argmax(dim=1)
    confusion = torch.zeros(classes, classes, dtype=torch.long)
    confusion.index_put_((target, predicted), torch.ones(n, dtype=torch.long), accumulate=True)
    print("confusion", confusion.tolist())
    print("accuracy", (predicted == target).float().mean().item())

# a margin loss: every wrong class's score against the right one, the right one masked out
logits = x @ w + b
right = logits[rows, target].unsqueeze(1)
margins = (logits - right + 1.0).clamp(min=0.0)
margins[rows, target] = 0.0
print("margin grad fn", margins.grad_fn.name())
margin_loss = margins.sum() / n
margin_loss.backward()
print("margin loss", round(margin_loss.item(), 5))
print("w grad", [round(v, 5) for v in w.grad.sum(dim=0).tolist()])

# paired gathers and scatters of a grid: diagonal, anti-diagonal, a checkerboard of ones
grid = torch.arange(16.0).reshape(4, 4)
i = torch.arange(4)
print("diagonal", grid[i, i].tolist(), "anti", grid[i, 3 - i].tolist())
print("pairs broadcast", grid[i[:, None], torch.tensor([0, 3])].tolist())
board = torch.zeros(4, 4)
board[(i[:, None] + i) % 2 == 0] = 1.0
board[[0, 3], [3, 0]] = torch.tensor([5.0, 7.0])
print("board", board.tolist())
# counts: repeated positions add up under accumulate
counts = torch.zeros(3, 3)
counts.index_put_((torch.tensor([0, 0, 2, 0]), torch.tensor([1, 1, 2, 1])), torch.ones(4), accumulate=True)
print("counts", counts.tolist())
