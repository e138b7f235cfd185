package io.fastblock.namenode.meta;

/**
 * A change to a volume's layers that its current state refuses, with the contract's error code
 * ({@code VOLUME_HAS_SNAPSHOTS}, {@code NOT_LATEST_SNAPSHOT}).
 */
public final class LayerConflictException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String code;

    public LayerConflictException(String code, String message) {
        super(message);
        this.code = code;
    }

    public String code() {
        return code;
    }
}
