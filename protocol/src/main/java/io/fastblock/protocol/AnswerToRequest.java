package io.fastblock.protocol;

/**
 * Names the connection it arrives on as the one where the receiving server sends direct answers
 * for {@code clientId}: a tail answers a write that carries {@link WriteRequest#FLAG_ANSWER_DIRECT}
 * and this client id on it (see {@link WriteRequest#answerTo}). A later registration of the same
 * id replaces it; the registration ends with its connection. Server-wide: no chain.
 */
public record AnswerToRequest(long requestId, long clientId) implements StorageMessage {
    public AnswerToRequest {
        if (clientId == 0) {
            throw new IllegalArgumentException("client id 0 means no client");
        }
    }

    @Override
    public OpCode op() {
        return OpCode.ANSWER_TO;
    }
}
