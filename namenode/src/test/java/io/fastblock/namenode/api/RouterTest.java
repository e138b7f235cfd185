package io.fastblock.namenode.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RouterTest {
    private final Router.Handler a = r -> ApiResponse.ok("a");
    private final Router.Handler b = r -> ApiResponse.ok("b");
    private final Router router = new Router()
            .add("GET", "/v1/volumes", a)
            .add("POST", "/v1/volumes", b)
            .add("GET", "/v1/volumes/{name}/chunks/{index}", a);

    @Test
    void bindsPathParameters() {
        Router.Match m = router.match("GET", "/v1/volumes/vol1/chunks/7");
        assertTrue(m.found());
        assertEquals(Map.of("name", "vol1", "index", "7"), m.params());
    }

    @Test
    void decodesPercentEscapesInParametersOnly() {
        // The Python client encodes an IQN's ':' (and any '/') so the initiator stays one segment.
        Router.Match m = router.match("GET", "/v1/volumes/iqn.2026-11.org.example%3Ahost%2Fx+y/chunks/7");
        assertTrue(m.found());
        assertEquals("iqn.2026-11.org.example:host/x+y", m.params().get("name"));
        assertFalse(router.match("GET", "/v1/volumes/bad%zz/chunks/7").found());
        assertFalse(router.match("GET", "/v1/vol%75mes/vol1/chunks/7").found(), "literal segments are not decoded");
    }

    @Test
    void choosesByMethod() throws Exception {
        assertEquals("b", router.match("POST", "/v1/volumes").handler().handle(null).body());
        assertEquals("a", router.match("GET", "/v1/volumes").handler().handle(null).body());
    }

    @Test
    void knownPathWrongMethodListsAllowedMethods() {
        Router.Match m = router.match("DELETE", "/v1/volumes");
        assertFalse(m.found());
        assertTrue(m.pathKnown());
        assertEquals(List.of("GET", "POST"), m.allowedMethods());
    }

    @Test
    void unknownPaths() {
        for (String path : new String[] {"/", "/v1", "/v1/volumes/", "/v1/volumes/x/chunks", "/v1/volumes//chunks/1",
                "/v2/volumes"}) {
            Router.Match m = router.match("GET", path);
            assertFalse(m.found(), path);
            assertFalse(m.pathKnown(), path);
        }
    }

    @Test
    void rejectsDuplicateRegistration() {
        assertThrows(IllegalArgumentException.class, () -> router.add("GET", "/v1/volumes", b));
    }

    @Test
    void listsRoutesInRegistrationOrder() {
        assertEquals(List.of(new Router.Route("GET", "/v1/volumes"), new Router.Route("POST", "/v1/volumes"),
                new Router.Route("GET", "/v1/volumes/{name}/chunks/{index}")), router.routes());
    }
}
