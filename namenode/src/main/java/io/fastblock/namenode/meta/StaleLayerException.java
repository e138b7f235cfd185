package io.fastblock.namenode.meta;

/** A writer named a layer that is no longer its volume's top (a snapshot or revert sealed it). */
public final class StaleLayerException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public StaleLayerException(String volume, long asked, long top) {
        super("layer " + asked + " of volume '" + volume + "' is sealed; the volume's writes now go to layer " + top);
    }
}
