#!/usr/bin/env python3
"""
Agentic Resource Discovery & ai-catalog Conformance Testing Tool
Autonomously validates capability manifests and Registry REST API implementations.
"""

import os
import sys
import re
import json
import urllib.request
import urllib.error

# Strict URN Regex matching urn:air:<publisher>:<namespace>:<agent-name>
URN_REGEX = re.compile(r"^urn:air:([a-zA-Z0-9.-]+)(?::([a-zA-Z0-9._:-]+))?:([a-zA-Z0-9._-]+)$")

# Colors for beautiful CLI output
COLOR_RESET = "\033[0m"
COLOR_BOLD = "\033[1m"
COLOR_RED = "\033[31m"
COLOR_GREEN = "\033[32m"
COLOR_YELLOW = "\033[33m"
COLOR_CYAN = "\033[36m"

def print_header(title):
    print(f"\n{COLOR_BOLD}{COLOR_CYAN}=== {title} ==={COLOR_RESET}")

def print_success(msg):
    print(f"  {COLOR_GREEN}✓{COLOR_RESET} {msg}")

def print_failure(msg):
    print(f"  {COLOR_RED}✗{COLOR_RESET} {msg}")

def print_warning(msg):
    print(f"  {COLOR_YELLOW}⚠{COLOR_RESET} {msg}")

def print_bullet(msg):
    print(f"  • {msg}")

def parse_request_headers(header_args):
    headers = {}
    for raw_header in header_args:
        if ":" not in raw_header:
            raise ValueError(f"Invalid header '{raw_header}'. Expected 'Name: value' format.")

        name, value = raw_header.split(":", 1)
        name = name.strip()
        value = value.strip()

        if not name:
            raise ValueError(f"Invalid header '{raw_header}'. Header name cannot be empty.")
        if "\r" in name or "\n" in name or "\r" in value or "\n" in value:
            raise ValueError(f"Invalid header '{raw_header}'. Header values cannot contain line breaks.")

        headers[name] = value

    return headers

class ConformanceTester:
    def __init__(self):
        self.errors = []
        self.warnings = []
        self.jsonschema_available = False
        try:
            import jsonschema
            self.jsonschema_available = True
        except ImportError:
            pass

    def add_error(self, msg):
        self.errors.append(msg)
        print_failure(msg)

    def add_warning(self, msg):
        self.warnings.append(msg)
        print_warning(msg)

    def run_json_schema_validation(self, manifest_data):
        if not self.jsonschema_available:
            print_warning("Python 'jsonschema' package not installed. Skipping strict JSON Schema check.")
            print_bullet("Tip: Run 'pip install jsonschema' to enable strict schema-level checking.")
            return True

        import jsonschema
        schema_path = os.path.join(os.path.dirname(__file__), "../../spec/schemas/ai-catalog.schema.json")
        if not os.path.exists(schema_path):
            print_warning(f"Schema file not found at {schema_path}. Skipping JSON Schema validation.")
            return True

        try:
            with open(schema_path, 'r') as f:
                schema_data = json.load(f)
            jsonschema.validate(instance=manifest_data, schema=schema_data)
            print_success("Strict JSON Schema validation passed.")
            return True
        except jsonschema.exceptions.ValidationError as e:
            self.add_error(f"JSON Schema Validation Failed: {e.message} at path '{'.'.join(map(str, e.absolute_path))}'")
            return False
        except Exception as e:
            self.add_warning(f"Failed to run JSON Schema validator: {e}")
            return True

    def validate_manifest(self, raw_content, source_label):
        print_header(f"Validating Manifest: {source_label}")
        
        # 1. Basic JSON Parsing
        try:
            data = json.loads(raw_content)
            print_success("Manifest parsed successfully as valid JSON.")
        except json.JSONDecodeError as e:
            self.add_error(f"Malformed JSON in manifest: {e}")
            return False

        # 2. Strict JSON Schema Validation
        schema_passed = self.run_json_schema_validation(data)

        # 3. Custom Semantic and Protocol-Specific Validation
        print_bullet("Running custom semantic checks...")
        
        spec_ver = data.get("specVersion")
        if not spec_ver:
            self.add_error("Missing required 'specVersion' root property.")
        elif spec_ver != "1.0":
            self.add_warning(f"Unrecognized 'specVersion': {spec_ver}. Expected '1.0'.")

        entries = data.get("entries")
        if entries is None:
            self.add_error("Missing required 'entries' array.")
            return False
        elif not isinstance(entries, list):
            self.add_error("'entries' must be a JSON array.")
            return False

        print_bullet(f"Found {len(entries)} entries to validate.")
        for idx, entry in enumerate(entries):
            label = entry.get("displayName") or entry.get("identifier") or f"Entry #{idx}"
            print(f"\n  {COLOR_BOLD}Entry: {label}{COLOR_RESET}")

            # Required properties
            ident = entry.get("identifier")
            if not ident:
                self.add_error(f"[{label}] Missing required 'identifier'.")
            else:
                # URN pattern checks
                match = URN_REGEX.match(ident)
                if not match:
                    self.add_error(f"[{label}] Identifier '{ident}' does not match RFC 8141 URN pattern 'urn:air:<publisher>:<namespace>:<agent-name>'.")
                else:
                    publisher, namespace, name = match.groups()
                    print_success(f"[{label}] Valid URN format. Publisher: '{publisher}', Name: '{name}'.")

            disp_name = entry.get("displayName")
            if not disp_name:
                self.add_error(f"[{label}] Missing required 'displayName'.")

            media_type = entry.get("type")
            if not media_type:
                self.add_error(f"[{label}] Missing required 'type' (mediaType).")
            else:
                valid_types = [
                    "application/ai-catalog+json",
                    "application/agent-card+json",
                    "application/a2a-agent-card+json",
                    "application/mcp-server-card+json",
                    "application/agent-skills+zip",
                    "application/agent-skills+gzip",
                    "text/markdown; profile=\"urn:air:agent-skills\"",
                    "application/ai-registry",
                    "application/ai-registry+json"
                ]
                if media_type not in valid_types:
                    self.add_warning(f"[{label}] Media type '{media_type}' is not one of standard discovery types: {valid_types}.")

            # Strict Value-or-Reference checks
            has_url = "url" in entry
            has_data = "data" in entry
            if has_url and has_data:
                self.add_error(f"[{label}] Constraint violation: both 'url' and 'data' are provided. MUST provide exactly one.")
            elif not has_url and not has_data:
                self.add_error(f"[{label}] Constraint violation: neither 'url' nor 'data' is provided. MUST provide exactly one.")
            else:
                print_success(f"[{label}] Correct Value-or-Reference delivery format (using {'url' if has_url else 'data'}).")

            # Custom constraints for representativeQueries
            queries = entry.get("representativeQueries")
            if queries is not None:
                if not isinstance(queries, list):
                    self.add_error(f"[{label}] 'representativeQueries' must be an array of strings.")
                else:
                    if len(queries) < 2 or len(queries) > 5:
                        self.add_warning(f"[{label}] 'representativeQueries' array has size {len(queries)}. 2 to 5 queries are recommended for vector index embedding.")
                    for q in queries:
                        if not isinstance(q, str):
                            self.add_error(f"[{label}] Query '{q}' is not a string.")

            # Progressive trust checks
            trust = entry.get("trustManifest")
            if trust is not None:
                if not isinstance(trust, dict):
                    self.add_error(f"[{label}] 'trustManifest' must be a JSON object.")
                else:
                    trust_id = trust.get("identity")
                    if not trust_id:
                        self.add_error(f"[{label}] 'trustManifest' is missing required 'identity' field.")

        # Top-level deprecated property check
        if "collections" in data:
            self.add_error("Deprecated field check: Found 'collections' array at root. Top-level collections were REMOVED in ADR-0003. Catalog hierarchies MUST be modeled inside 'entries' using 'type: application/ai-catalog+json'.")

        return len(self.errors) == 0

    def validate_registry(self, registry_base_url, request_headers=None):
        print_header(f"Validating Agent Registry: {registry_base_url}")
        base_url = registry_base_url.rstrip('/')
        request_headers = request_headers or {}
        
        # 1. Test GET /agents (Optional deterministic listing)
        agents_url = f"{base_url}/agents"
        print(f"\n  {COLOR_BOLD}Probing GET /agents...{COLOR_RESET}")
        try:
            req = urllib.request.Request(agents_url, headers=request_headers, method="GET")
            with urllib.request.urlopen(req, timeout=5) as response:
                body = response.read().decode('utf-8')
                data = json.loads(body)
                if response.status == 200:
                    print_success(f"GET /agents responded successfully with 200 OK.")
                    # Check schema conformance
                    if not isinstance(data, dict) or "items" not in data:
                        self.add_error("GET /agents response is not a valid paginated object. Missing 'items' array.")
                    else:
                        print_success(f"GET /agents response contains valid 'items' list ({len(data.get('items', []))} items).")
                else:
                    self.add_warning(f"GET /agents returned unexpected status: {response.status}")
        except urllib.error.HTTPError as e:
            if e.code in [404, 501]:
                print_warning(f"GET /agents responded with {e.code} (Not Implemented/Not Found). This endpoint is optional and this is compliant behavior.")
            else:
                self.add_error(f"GET /agents returned server error: {e.code} {e.reason}")
        except Exception as e:
            self.add_error(f"Failed to contact GET /agents: {e}")
        # 2. Test POST /search (Mandatory Discovery Endpoint)
        search_url = f"{base_url}/search"
        print(f"\n  {COLOR_BOLD}Probing POST /search (Mandated Discovery endpoint)...{COLOR_RESET}")
        
        mock_search_query = {
            "query": {
                "text": "weather forecast tools",
                "filter": {
                    "type": ["application/mcp-server-card+json"]
                }
            },
            "federation": "none",
            "pageSize": 2
        }
        
        try:
            req_data = json.dumps(mock_search_query).encode('utf-8')
            headers = dict(request_headers)
            headers["Content-Type"] = "application/json"
            req = urllib.request.Request(
                search_url,
                data=req_data,
                headers=headers,
                method="POST"
            )
            
            with urllib.request.urlopen(req, timeout=5) as response:
                body = response.read().decode('utf-8')
                data = json.loads(body)
                
                if response.status == 200:
                    print_success("POST /search responded successfully with 200 OK.")
                    
                    results = data.get("results")
                    if results is None:
                        self.add_error("POST /search response is missing required 'results' array.")
                    elif not isinstance(results, list):
                        self.add_error("POST /search response 'results' is not a JSON array.")
                    else:
                        print_success(f"POST /search returned valid results list ({len(results)} items).")
                        
                        for idx, item in enumerate(results):
                            label = f"Result #{idx}"
                            
                            score = item.get("score")
                            if score is None:
                                self.add_error(f"[{label}] Missing required SearchResultItem field 'score'.")
                            elif not isinstance(score, int) or score < 0 or score > 100:
                                self.add_error(f"[{label}] 'score' must be an integer between 0 and 100. Got {score}.")
                                
                            source = item.get("source")
                            if not source:
                                self.add_error(f"[{label}] Missing required SearchResultItem field 'source'.")
                                
                            ident = item.get("identifier")
                            if not ident:
                                self.add_error(f"[{label}] Nested catalog entry is missing 'identifier'.")
                            
                            disp_name = item.get("displayName")
                            if not disp_name:
                                self.add_error(f"[{label}] Nested catalog entry is missing 'displayName'.")
                                
                            mtype = item.get("type")
                            if not mtype:
                                self.add_error(f"[{label}] Nested catalog entry is missing 'type'.")
                                
                            if "url" not in item and "data" not in item:
                                self.add_error(f"[{label}] Nested catalog entry must contain either 'url' or 'data'.")
                else:
                    self.add_error(f"POST /search returned unexpected HTTP status: {response.status}")
        except urllib.error.HTTPError as e:
            self.add_error(f"POST /search request failed: {e.code} {e.reason}")
        except Exception as e:
            self.add_error(f"Failed to execute search probe: {e}")

        # 3. Test POST /explore (Optional Introspection Endpoint)
        explore_url = f"{base_url}/explore"
        print(f"\n  {COLOR_BOLD}Probing POST /explore (Optional Introspection endpoint)...{COLOR_RESET}")
        
        mock_explore_query = {
            "query": {
                "text": "weather"
            },
            "resultType": {
                "facets": [
                    { "field": "type" }
                ]
            }
        }
        
        try:
            req_data = json.dumps(mock_explore_query).encode('utf-8')
            headers = dict(request_headers)
            headers["Content-Type"] = "application/json"
            req = urllib.request.Request(
                explore_url,
                data=req_data,
                headers=headers,
                method="POST"
            )
            
            with urllib.request.urlopen(req, timeout=5) as response:
                body = response.read().decode('utf-8')
                data = json.loads(body)
                
                if response.status == 200:
                    print_success("POST /explore responded successfully with 200 OK.")
                    
                    rtype = data.get("resultType")
                    if rtype != "facets":
                        self.add_error(f"POST /explore response 'resultType' expected 'facets', got '{rtype}'.")
                        
                    facets = data.get("facets")
                    if facets is None:
                        self.add_error("POST /explore response is missing required 'facets' block.")
                    elif not isinstance(facets, dict):
                        self.add_error("POST /explore response 'facets' is not a JSON object.")
                    else:
                        print_success("POST /explore returned valid facets object.")
                        
                else:
                    self.add_error(f"POST /explore returned unexpected HTTP status: {response.status}")
        except urllib.error.HTTPError as e:
            if e.code in [404, 501]:
                print_warning(f"POST /explore responded with {e.code} (Not Implemented/Not Found). This endpoint is optional and this is compliant behavior.")
            else:
                self.add_error(f"POST /explore returned server error: {e.code} {e.reason}")
        except Exception as e:
            self.add_error(f"Failed to execute explore probe: {e}")

        return len(self.errors) == 0

def main():
    if len(sys.argv) < 3:
        print(f"{COLOR_BOLD}Agentic Resource Discovery Conformance CLI v0.5.0{COLOR_RESET}")
        print("Usage:")
        print("  conformance-test manifest <local_file_path_or_url>")
        print("  conformance-test registry <registry_base_url> [--header 'Name: value']...")
        sys.exit(1)

    command = sys.argv[1].lower()
    target = sys.argv[2]
    args = sys.argv[3:]
    tester = ConformanceTester()

    if command == "manifest":
        if args:
            print_failure(f"Unexpected arguments for manifest command: {' '.join(args)}")
            sys.exit(1)
        # Handle remote url vs local path
        if target.startswith("http://") or target.startswith("https://"):
            try:
                print_bullet(f"Fetching remote manifest from {target}...")
                with urllib.request.urlopen(target, timeout=5) as response:
                    content = response.read().decode('utf-8')
                success = tester.validate_manifest(content, target)
            except Exception as e:
                print_failure(f"Failed to fetch remote manifest: {e}")
                sys.exit(1)
        else:
            if not os.path.exists(target):
                print_failure(f"Local file does not exist: {target}")
                sys.exit(1)
            try:
                with open(target, 'r') as f:
                    content = f.read()
                success = tester.validate_manifest(content, target)
            except Exception as e:
                print_failure(f"Failed to read local file: {e}")
                sys.exit(1)
    elif command == "registry":
        header_args = []
        idx = 0
        while idx < len(args):
            arg = args[idx]
            if arg != "--header":
                print_failure(f"Unknown registry option '{arg}'. Supported option: --header 'Name: value'")
                sys.exit(1)
            if idx + 1 >= len(args):
                print_failure("--header requires a value in 'Name: value' format.")
                sys.exit(1)
            header_args.append(args[idx + 1])
            idx += 2

        try:
            request_headers = parse_request_headers(header_args)
        except ValueError as e:
            print_failure(str(e))
            sys.exit(1)

        success = tester.validate_registry(target, request_headers=request_headers)
    else:
        print_failure(f"Unknown test suite command '{command}'. Must be 'manifest' or 'registry'.")
        sys.exit(1)

    # Summary reporting
    print_header("Conformance Validation Summary")
    if success:
        print(f"{COLOR_BOLD}{COLOR_GREEN}CONFORMANCE STATUS: PASS{COLOR_RESET}")
        print(f"Validated with 0 critical specification errors and {len(tester.warnings)} warnings.")
        sys.exit(0)
    else:
        print(f"{COLOR_BOLD}{COLOR_RED}CONFORMANCE STATUS: FAIL{COLOR_RESET}")
        print(f"Found {len(tester.errors)} critical specification errors. Implementation is NOT conformant.")
        sys.exit(1)

if __name__ == "__main__":
    main()
