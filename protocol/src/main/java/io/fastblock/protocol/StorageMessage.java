package io.fastblock.protocol;

/** A decoded frame of the storage protocol. */
public sealed interface StorageMessage permits PingRequest, WriteRequest, ReadRequest, StorageResponse,
        ChunkListRequest, CopyReadRequest, ExtentsRequest, FenceRequest, ChangesRequest, AnswerToRequest {
    /** Chosen by the sender, echoed in the response; unique among a connection's outstanding requests. */
    long requestId();

    OpCode op();
}
