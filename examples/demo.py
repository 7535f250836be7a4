"""Train a logistic regression with shared variables and updates.

Run with ``make demo``. It builds the model symbolically, takes the gradient
with ``lucent.grad``, compiles one training step whose ``updates`` move the
shared weights, prints the step's graph with ``lucent.dprint``, and trains,
printing the loss as it decreases.
"""

import numpy as np

import lucent
import lucent.tensor as lt


def make_data(rng, n=500, d=5):
    """Two overlapping classes separated by a random hyperplane."""
    X = rng.normal(size=(n, d))
    true_w = rng.normal(size=d)
    y = (X @ true_w + 0.5 * rng.normal(size=n) > 0).astype("float64")
    return X, y


def main():
    rng = np.random.default_rng(42)
    X_data, y_data = make_data(rng)
    n_features = X_data.shape[1]

    x = lt.dmatrix("x")
    y = lt.dvector("y")
    w = lucent.shared(np.zeros(n_features), name="w")
    b = lucent.shared(0.0, name="b")

    p_1 = lt.sigmoid(lt.dot(x, w) + b)  # probability of class 1
    xent = -y * lt.log(p_1) - (1 - y) * lt.log(1 - p_1)  # cross-entropy per example
    cost = xent.mean() + 0.01 * (w**2).sum()  # with a small L2 penalty
    gw, gb = lucent.grad(cost, [w, b])

    learning_rate = 0.5
    train = lucent.function(
        inputs=[x, y],
        outputs=cost,
        updates=[(w, w - learning_rate * gw), (b, b - learning_rate * gb)],
        name="train",
    )
    predict = lucent.function([x], p_1 > 0.5, name="predict")

    print("The training step's graph:")
    lucent.dprint(train)
    print()
    print(f"mode: {train.maker.mode!r}")
    print()

    losses = []
    for step in range(101):
        loss = float(train(X_data, y_data))
        losses.append(loss)
        if step % 10 == 0:
            print(f"step {step:3d}  loss {loss:.4f}")

    accuracy = float(np.mean(predict(X_data) == (y_data > 0.5)))
    print()
    print(f"loss went from {losses[0]:.4f} to {losses[-1]:.4f}; training accuracy {accuracy:.1%}")
    print(f"learned w = {np.round(w.get_value(), 3)}, b = {float(b.get_value()):.3f}")
    if not losses[-1] < losses[0]:
        raise SystemExit("the loss did not decrease")


if __name__ == "__main__":
    main()
