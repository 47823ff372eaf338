"""Serializers the API's apps share: a user as other objects name them."""

from rest_framework import serializers


class UserRefSerializer(serializers.Serializer[object]):
    """A user named by another object (who created, proctored, marked): username and name."""

    username = serializers.CharField()
    name = serializers.CharField()
