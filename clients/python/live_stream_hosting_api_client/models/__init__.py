"""Contains all the data models used in inputs/outputs"""

from .analytics import Analytics
from .analytics_by_platform import AnalyticsByPlatform
from .analytics_stream import AnalyticsStream
from .attempt_status import AttemptStatus
from .clip_list import ClipList
from .clip_request import ClipRequest
from .clip_status import ClipStatus
from .clip_view import ClipView
from .creator import Creator
from .creator_list import CreatorList
from .delivery_log import DeliveryLog
from .delivery_log_entry import DeliveryLogEntry
from .delivery_log_entry_body_type_0 import DeliveryLogEntryBodyType0
from .destination import Destination
from .destination_platform import DestinationPlatform
from .destination_request import DestinationRequest
from .destination_request_platform import DestinationRequestPlatform
from .destination_status import DestinationStatus
from .discovery import Discovery
from .discovery_endpoints import DiscoveryEndpoints
from .end_reason import EndReason
from .error import Error
from .error_code import ErrorCode
from .error_detail import ErrorDetail
from .event_type import EventType
from .get_open_api_response_200 import GetOpenApiResponse200
from .period import Period
from .recording_part import RecordingPart
from .recording_status import RecordingStatus
from .recording_view import RecordingView
from .redeliver_request import RedeliverRequest
from .redelivered import Redelivered
from .register_webhook_request import RegisterWebhookRequest
from .rotate_secret_request import RotateSecretRequest
from .secret_rotated import SecretRotated
from .set_viewers_request import SetViewersRequest
from .show_error import ShowError
from .show_event import ShowEvent
from .show_event_data import ShowEventData
from .show_list import ShowList
from .show_status_type_0 import ShowStatusType0
from .show_view import ShowView
from .show_view_stream import ShowViewStream
from .start_stream_request import StartStreamRequest
from .start_stream_request_platform import StartStreamRequestPlatform
from .stream_created import StreamCreated
from .stream_detail import StreamDetail
from .stream_ended import StreamEnded
from .stream_event_entry import StreamEventEntry
from .stream_list import StreamList
from .stream_status import StreamStatus
from .stream_summary import StreamSummary
from .stream_usage import StreamUsage
from .test_delivery import TestDelivery
from .test_failure_request import TestFailureRequest
from .update_webhook_request import UpdateWebhookRequest
from .webhook_deleted import WebhookDeleted
from .webhook_detail import WebhookDetail
from .webhook_disabled_data import WebhookDisabledData
from .webhook_disabled_event import WebhookDisabledEvent
from .webhook_event import WebhookEvent
from .webhook_event_data import WebhookEventData
from .webhook_list import WebhookList
from .webhook_list_item import WebhookListItem
from .webhook_registered import WebhookRegistered

__all__ = (
    "Analytics",
    "AnalyticsByPlatform",
    "AnalyticsStream",
    "AttemptStatus",
    "ClipList",
    "ClipRequest",
    "ClipStatus",
    "ClipView",
    "Creator",
    "CreatorList",
    "DeliveryLog",
    "DeliveryLogEntry",
    "DeliveryLogEntryBodyType0",
    "Destination",
    "DestinationPlatform",
    "DestinationRequest",
    "DestinationRequestPlatform",
    "DestinationStatus",
    "Discovery",
    "DiscoveryEndpoints",
    "EndReason",
    "Error",
    "ErrorCode",
    "ErrorDetail",
    "EventType",
    "GetOpenApiResponse200",
    "Period",
    "RecordingPart",
    "RecordingStatus",
    "RecordingView",
    "Redelivered",
    "RedeliverRequest",
    "RegisterWebhookRequest",
    "RotateSecretRequest",
    "SecretRotated",
    "SetViewersRequest",
    "ShowError",
    "ShowEvent",
    "ShowEventData",
    "ShowList",
    "ShowStatusType0",
    "ShowView",
    "ShowViewStream",
    "StartStreamRequest",
    "StartStreamRequestPlatform",
    "StreamCreated",
    "StreamDetail",
    "StreamEnded",
    "StreamEventEntry",
    "StreamList",
    "StreamStatus",
    "StreamSummary",
    "StreamUsage",
    "TestDelivery",
    "TestFailureRequest",
    "UpdateWebhookRequest",
    "WebhookDeleted",
    "WebhookDetail",
    "WebhookDisabledData",
    "WebhookDisabledEvent",
    "WebhookEvent",
    "WebhookEventData",
    "WebhookList",
    "WebhookListItem",
    "WebhookRegistered",
)
