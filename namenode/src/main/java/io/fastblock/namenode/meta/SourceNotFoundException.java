package io.fastblock.namenode.meta;

/** A clone's source (snapshot or volume) does not exist. */
public final class SourceNotFoundException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SourceNotFoundException(String message) {
        super(message);
    }
}
