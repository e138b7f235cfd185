package io.fastblock.namenode.layers;

/**
 * Makes the seal of a layer (already recorded in ZooKeeper at {@code /fastblock/fences/{layer}})
 * effective at once: when {@link #seal} returns, no write to the layer can still be acknowledged.
 */
@FunctionalInterface
public interface LayerSealer {
    /** A sealer for a namenode with no storage servers to tell (tests of the metadata alone). */
    LayerSealer ZOOKEEPER_ONLY = layer -> { };

    /** @throws SealIncompleteException if some live storage server did not confirm */
    void seal(long layer);

    /** Some live storage server did not confirm a seal; the seal stays recorded in ZooKeeper. */
    final class SealIncompleteException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public SealIncompleteException(String message) {
            super(message);
        }
    }
}
