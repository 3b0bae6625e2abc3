"""Port of JAX's examples/mnist_vae.py: a variational autoencoder (stax encoder 784-512-512-(10,10),
decoder 10-512-512-784) trained by momentum on binarized MNIST-shaped synthetic data, batch 32.

Timed: `run_epoch` (the jitted `fori_loop` over every batch of the epoch: 1875 batches at full
size), `evaluate` (the ELBO on the 10,000 test images plus a 10x10 grid of sampled images), and
the sampled image grid alone (`image_sample`: transposes, hstack and vstack of 100 images).
The plotting (`plt.imsave`) is left out.
"""
from benchmarks.examples import common

if common.BACKEND == "jax":
    import jax
    import jax.numpy as jnp
    from jax import grad, jit, lax, random
    from jax.example_libraries import optimizers, stax
else:
    import omnistage as jax
    import omnistage.numpy as jnp
    from omnistage import grad, jit, lax, random
    from omnistage.example_libraries import optimizers, stax

EXAMPLE = "mnist_vae"
gap = common.missing_names(stax, ["Dense", "FanOut", "Relu", "Softplus", "serial", "parallel"])
if gap:
    common.skip(EXAMPLE, "missing: " + ", ".join(gap))
Dense, FanOut, Relu, Softplus = stax.Dense, stax.FanOut, stax.Relu, stax.Softplus


def gaussian_kl(mu, sigmasq):
    """KL divergence from a diagonal Gaussian to the standard Gaussian."""
    return -0.5 * jnp.sum(1. + jnp.log(sigmasq) - mu**2. - sigmasq)


def gaussian_sample(rng, mu, sigmasq):
    """Sample a diagonal Gaussian."""
    return mu + jnp.sqrt(sigmasq) * random.normal(rng, mu.shape)


def bernoulli_logpdf(logits, x):
    """Bernoulli log pdf of data x given logits."""
    return -jnp.sum(jnp.logaddexp(0., jnp.where(x, -1., 1.) * logits))


def elbo(rng, params, images):
    """Monte Carlo estimate of the negative evidence lower bound."""
    enc_params, dec_params = params
    mu_z, sigmasq_z = encode(enc_params, images)
    logits_x = decode(dec_params, gaussian_sample(rng, mu_z, sigmasq_z))
    return bernoulli_logpdf(logits_x, images) - gaussian_kl(mu_z, sigmasq_z)


def image_sample(rng, params, nrow, ncol):
    """Sample images from the generative model."""
    _, dec_params = params
    code_rng, img_rng = random.split(rng)
    logits = decode(dec_params, random.normal(code_rng, (nrow * ncol, 10)))
    sampled_images = random.bernoulli(img_rng, jnp.logaddexp(0., logits))
    return image_grid(nrow, ncol, sampled_images, (28, 28))


def image_grid(nrow, ncol, imagevecs, imshape):
    """Reshape a stack of image vectors into an image grid for plotting."""
    images = iter(imagevecs.reshape((-1,) + imshape))
    return jnp.vstack([jnp.hstack([next(images).T for _ in range(ncol)][::-1]) for _ in range(nrow)]).T


hidden = common.pick(512, tiny=32)
encoder_init, encode = stax.serial(
    Dense(hidden), Relu, Dense(hidden), Relu, FanOut(2),
    stax.parallel(Dense(10), stax.serial(Dense(10), Softplus)),
)
decoder_init, decode = stax.serial(Dense(hidden), Relu, Dense(hidden), Relu, Dense(28 * 28))


def main():
    step_size, batch_size = 0.001, 32
    nrow, ncol = 10, 10
    test_rng = random.key(1)
    train_images, _, test_images, _ = common.mnist(*common.pick((60000, 10000), (6000, 10000), (256, 256)))
    num_batches = -(-train_images.shape[0] // batch_size)

    enc_init_rng, dec_init_rng = random.split(random.key(2))
    _, init_encoder_params = encoder_init(enc_init_rng, (batch_size, 28 * 28))
    _, init_decoder_params = decoder_init(dec_init_rng, (batch_size, 10))
    init_params = init_encoder_params, init_decoder_params
    opt_init, opt_update, get_params = optimizers.momentum(step_size, mass=0.9)
    train_images = jax.device_put(train_images)
    test_images = jax.device_put(test_images)

    def binarize_batch(rng, i, images):
        i = i % num_batches
        batch = lax.dynamic_slice_in_dim(images, i * batch_size, batch_size)
        return random.bernoulli(rng, batch)

    @jit
    def run_epoch(rng, opt_state, images):
        def body_fun(i, opt_state):
            elbo_rng, data_rng = random.split(random.fold_in(rng, i))
            batch = binarize_batch(data_rng, i, images)
            loss = lambda params: -elbo(elbo_rng, params, batch) / batch_size  # noqa: E731
            g = grad(loss)(get_params(opt_state))
            return opt_update(i, g, opt_state)
        return lax.fori_loop(0, num_batches, body_fun, opt_state)

    @jit
    def evaluate(opt_state, images):
        params = get_params(opt_state)
        elbo_rng, data_rng, image_rng = random.split(test_rng, 3)
        binarized_test = random.bernoulli(data_rng, images)
        test_elbo = elbo(elbo_rng, params, binarized_test) / images.shape[0]
        sampled_images = image_sample(image_rng, params, nrow, ncol)
        return test_elbo, sampled_images

    epochs = iter(range(1000))
    opt_state = common.time_program(
        EXAMPLE, f"run_epoch ({num_batches} batches of 32)",
        lambda state: run_epoch(random.key(next(epochs)), state or opt_init(init_params), train_images),
        common.repeats(common.pick(3, 5)))
    common.time_program(
        EXAMPLE, f"evaluate (ELBO of {len(test_images)} images + grid)",
        lambda _: evaluate(opt_state, test_images), common.repeats(common.pick(5, 10)))
    sample = jit(image_sample, static_argnums=(2, 3))
    params = get_params(opt_state)
    common.time_program(
        EXAMPLE, "image_sample (10x10 grid)", lambda _: sample(random.key(3), params, nrow, ncol), common.repeats(20))


if __name__ == "__main__":
    main()
