package io.fastblock.namenode.meta;

/** ZooKeeper could not be read or written (connection loss, timeout, unexpected error). */
public class MetadataUnavailableException extends RuntimeException {
    public MetadataUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
