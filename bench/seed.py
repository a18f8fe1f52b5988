"""Writes a benchmark seed: BRANDS brands, each with a test key holding every scope and one
ended stream, so that load spread over the brands stays under the per-brand rate limit.
Usage: python3 bench/seed.py BRANDS OUT.json"""

import json
import sys

brands = int(sys.argv[1])
scopes = ["streams:read", "streams:write", "analytics:read", "webhooks:write"]
seed = {"brands": [], "api_keys": [], "creators": [], "streams": []}
seed["creators"].append({"id": "avt_ava000000001", "name": "Ava", "status": "active",
                         "languages": ["en"], "style": None, "personality": None, "vibe": None,
                         "consent": True, "photo": None})
for i in range(brands):
    brand = f"bench_{i}"
    seed["brands"].append({"id": brand, "name": brand, "plan": "growth", "vertical": "live-commerce"})
    seed["api_keys"].append({"key": f"svc_test_bench{i:027d}", "brand_id": brand, "scopes": scopes})
    seed["streams"].append({
        "id": f"00000000-0000-4000-8000-{i:012d}", "brand_id": brand, "status": "ended",
        "platform": "tiktok", "vertical": "live-commerce", "creator_id": "avt_ava000000001",
        "product_name": "Glow Serum", "source": "api", "room_name": f"room-{i}",
        "viewer_count": 42, "test": True, "created_at": "2026-11-01T10:00:00Z",
        "started_at": "2026-11-01T10:00:00Z", "ended_at": "2026-11-01T11:00:00Z"})
json.dump(seed, open(sys.argv[2], "w"))
