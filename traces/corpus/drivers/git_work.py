"""Version control with git: a repository of FILES source-like text files built up over
ROUNDS commits (each rewriting a few percent of the files, adding some and deleting
others), a branch checked out and back every 10 commits, the repository cloned locally and
the commit halfway back checked out in the clone, then `git gc` on both. Most of git's writes are
new loose objects, packs and index files that a later repack or checkout deletes: the
dead-on-arrival data of a version-control workload. Deterministic for a seed.

usage: python git_work.py [ROUNDS] [FILES] [SEED]
"""

import os
import random
import subprocess
import sys

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 120
FILES = int(sys.argv[2]) if len(sys.argv) > 2 else 600
SEED = int(sys.argv[3]) if len(sys.argv) > 3 else 1
rng = random.Random(SEED)
WORDS = [
    "let", "fn", "return", "if", "else", "for", "while", "match", "struct", "impl", "pub",
    "self", "value", "count", "index", "page", "block", "write", "read", "error", "result",
]  # fmt: skip
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "corpus",
    "GIT_AUTHOR_EMAIL": "corpus@example.org",
    "GIT_COMMITTER_NAME": "corpus",
    "GIT_COMMITTER_EMAIL": "corpus@example.org",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
}


def git(*args: str, cwd: str = "repo") -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, stdout=subprocess.DEVNULL)


def text(lines: int) -> str:
    return "".join(
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + "\n" for _ in range(lines)
    )


def path(i: int) -> str:
    return os.path.join("repo", f"src/m{i % 20:02d}/f{i:05d}.rs")


os.makedirs("repo")
git("init", "-q", "-b", "main")
files = list(range(FILES))
next_file = FILES
for i in files:
    os.makedirs(os.path.dirname(path(i)), exist_ok=True)
    with open(path(i), "w") as f:
        f.write(text(rng.randint(20, 400)))
git("add", "-A")
git("commit", "-q", "-m", "initial")
for r in range(1, ROUNDS + 1):
    for i in rng.sample(files, max(1, len(files) // 30)):
        with open(path(i), "a" if rng.random() < 0.5 else "w") as f:
            f.write(text(rng.randint(5, 200)))
    for _ in range(rng.randint(0, 3)):
        os.makedirs(os.path.dirname(path(next_file)), exist_ok=True)
        with open(path(next_file), "w") as f:
            f.write(text(rng.randint(20, 300)))
        files.append(next_file)
        next_file += 1
    for _ in range(rng.randint(0, 2)):
        os.remove(path(files.pop(rng.randrange(len(files)))))
    git("add", "-A")
    git("commit", "-q", "-m", f"round {r}")
    if r % 10 == 0:
        git("checkout", "-q", "-b", f"topic{r}", f"HEAD~{rng.randint(3, 9)}")
        git("checkout", "-q", "main")
git("clone", "-q", "repo", "clone", cwd=".")
git("checkout", "-q", f"HEAD~{ROUNDS // 2}", cwd="clone")
git("gc", "-q", cwd="clone")
git("gc", "-q")
print(f"{ROUNDS} commits, {len(files)} files")
